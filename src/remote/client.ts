// The remote API client the engine codes against: list / get / put / remove per kind, in either
// dialect, over the shared transport. The rules that keep data safe live here: full-document
// writes with ?create=true and body id = URL id, form entries never lost, an ambiguous write
// re-read instead of blindly re-sent, listings refused unless well-formed.

import type { Logger } from 'pino'
import { ExitCode } from '../errors/exit-codes.js'
import { probeUser } from './auth.js'
import { storedMatchesSent } from './compare.js'
import {
  authHeaders,
  classify,
  type Dialect,
  detectDialect,
  isItemMissing,
  NATIVE_SCHEMA_IDS,
  projectPath,
  type RemoteKind,
  ROUTE_WORDS,
  SEGMENT,
} from './dialect.js'
import {
  cleanServerMessage,
  ListingError,
  listingNextStep,
  RemoteError,
  remoteError,
  routeOf,
  withoutNextStep,
} from './errors.js'
import {
  createTransport,
  type HttpRequest,
  type HttpResponse,
  isAmbiguous,
  type ListingMarker,
  listingMarker,
  listingUnchangedSince,
} from './http.js'
import { type CachedListing, type ListingCache, NEVER_CACHED } from './listing-cache.js'
import type { RequestStats } from './queue.js'
import { backoffDelayMs, sleep } from './retry.js'

export type RemoteObject = Record<string, unknown>
export type { Dialect, RemoteKind }

export interface RemoteClientOptions {
  server: string
  project: string
  environment: string
  token?: string | undefined
  dialect: 'auto' | Dialect
  rateLimit: { requestsPerSecond: number; concurrency: number }
  /** Per request: no answer headers, or no body progress, for this long fails the attempt. */
  timeoutMs?: number
  maxRetries?: number
  tlsInsecure?: boolean
  logger?: Logger | undefined
  /** Backoff between retries; tests shorten it. */
  backoff?: { baseMs: number; capMs: number }
  /** The most one listing may weigh (cms-sync.yaml `limits.listingMB`); 128 MB by default. */
  listMaxBytes?: number
  /** Where listings are kept for conditional reads (a workspace's .cms-sync/listings/). */
  listingCache?: ListingCache
}

/** One kind's listing (RemoteClient.listing). */
export interface Listing {
  /** The items, as `list` gives them; parsed on the first call when the listing answered 304. */
  items(): RemoteObject[]
  /** The server answered 304, and the kept copy's head said `clean` (listing-cache.ts): its value. */
  clean?: string
  /** With `clean`: the ids the head noted as naming a schedule. */
  dated?: readonly string[]
  /** Notes beside the kept copy that the state with this digest matches the listing. */
  markClean(clean: string, dated?: readonly string[]): Promise<void>
  /** The server answered 304: the items are the kept copy's, which never decides a delete alone. */
  kept?: true
}

export interface PutOptions {
  /**
   * The pre-write state the caller planned against. Consulted only after an ambiguous failure:
   * if the re-read item still satisfies it, the write is retried; otherwise the client throws
   * RemoteConflictError rather than overwrite a change it did not see. Without it, a write
   * that did not land is retried (the write was last-writer-wins to begin with).
   */
  expected?: (current: RemoteObject | undefined) => boolean
}

/** Options of `request()`: what HttpRequest documents, minus what the path and method say. */
export type RequestOptions = Pick<
  HttpRequest,
  | 'body'
  | 'contentType'
  | 'headers'
  | 'responseType'
  | 'maxBytes'
  | 'idempotent'
  | 'bodyStream'
  | 'contentLength'
  | 'sink'
  | 'itemId'
  | 'signal'
  | 'digest'
>

export interface RemoteResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer | string | unknown
  /** With `digest`: the sha1 of the 2xx body's bytes. */
  digest?: string
}

export interface RemoteClient {
  readonly dialect: Dialect
  readonly target: { server: string; project: string; environment: string }
  /** The most one listing may weigh; the media listing keeps to it too. */
  readonly listMaxBytes: number
  list(kind: RemoteKind, opts?: { signal?: AbortSignal }): Promise<RemoteObject[]>
  /**
   * The listing as `list` reads it, with what a kept copy says of it: a listing answered 304
   * from a kept copy is parsed only when its items are asked for.
   */
  listing(kind: RemoteKind, opts?: { signal?: AbortSignal; unconditional?: boolean }): Promise<Listing>
  /**
   * Whether the kind's listing is byte for byte what the last `list` read (one request, nothing
   * parsed): watch's remote poll stops there when nothing changed. False when not known.
   */
  listingUnchanged(kind: RemoteKind): Promise<boolean>
  get(kind: RemoteKind, id: string): Promise<RemoteObject | undefined>
  put(kind: RemoteKind, id: string, body: RemoteObject, opts?: PutOptions): Promise<RemoteObject>
  remove(kind: RemoteKind, id: string): Promise<void>
  /**
   * `POST P/<kind>/pull/:id`: the server copies the item it inherits from its parent project
   * into the project as a local (unlocked) item. Throws RemoteError when it could not.
   */
  pullInherited(kind: RemoteKind, id: string): Promise<void>
  /** `POST P/<kind>/push/:id`: the server sends its local item up to the parent project. */
  pushToParent(kind: RemoteKind, id: string): Promise<void>
  /**
   * `POST P/content/publish|unpublish` with the whole item: the server deploys it through its
   * connection, then writes it again with `isPublished` set (schedule dates included). Returns
   * the item as the server answers it; throws RemoteError with the server's words.
   */
  publish(verb: 'publish' | 'unpublish', item: RemoteObject): Promise<RemoteObject>
  /**
   * Any route, through the same queue, retries and auth. `path` starts with `/`. 2xx and 4xx
   * answers are returned; 5xx and 429 after the retries, redirects, timeouts and network
   * failures throw RemoteError.
   */
  request(method: string, path: string, opts?: RequestOptions): Promise<RemoteResponse>
  /**
   * A GET of a listing of another module's (media), asked with the kept ETag when a listing
   * cache is set: a 304 is answered from the kept text. `keep` keeps this answer; call it once
   * the listing is known good. `unconditional`: asked without the kept ETag (the answer is kept).
   */
  readListing(
    name: 'media',
    path: string,
    opts?: Pick<RequestOptions, 'signal'> & { unconditional?: boolean },
  ): Promise<{ res: RemoteResponse; keep?: () => Promise<void>; fromKept?: true }>
  /** Drops the kept listing of another module's (media) before the tool's own write to it. */
  forgetListing(name: 'media'): Promise<void>
  /** The aliases of `GET P/connections/deployers` and `GET P/connections/processors`. */
  connectionTypes(): Promise<{ deployers: string[]; processors: string[] }>
  /** A form's entries (people's submissions), or undefined when there is no such form. */
  formEntries(formId: string): Promise<RemoteObject[] | undefined>
  /** `POST P/forms/clear/:id`: deletes every entry of the form. */
  clearFormEntries(formId: string): Promise<void>
  /**
   * Deletes the given entries (an export's) and only those: entries submitted since the export
   * stay on the server. Returns how many were deleted and how many were kept.
   */
  clearExportedFormEntries(
    formId: string,
    exported: readonly RemoteObject[],
  ): Promise<{ cleared: number; kept: number }>
  /** The logged-in user (`GET /api/user`); UnauthorizedError when there is no valid token. */
  checkToken(): Promise<RemoteObject>
  /**
   * Uses this token from the next request on: a long-running `watch` whose token expired picks
   * up the one a `cms-sync login` in another terminal stored.
   */
  setToken(token: string): void
  /** This client's counters since it was created (the queue and its limit may be shared). */
  stats(): RequestStats
  close(): Promise<void>
}

export const DEFAULT_LIST_MAX_BYTES = 128 * 1024 * 1024
const ITEM_MAX_BYTES = 64 * 1024 * 1024
/** How long a token check that passed stands for the next runs of the same client. */
const TOKEN_CHECK_VALID_MS = 60_000

/**
 * Why a listing request failed, in words. An answer over the cap is said so with the setting
 * that raises it: a real project that large needs it raised, a hostile server must not get more.
 */
export function listingFailure(cause: RemoteError, maxBytes: number): string {
  if (cause.code !== 'too-large' || cause.status === 413) {
    if (!(cause instanceof RemoteError)) return String((cause as Error).message)
    return `${withoutNextStep(cause)}; ${listingNextStep(cause.code)}`
  }
  const mb = Math.round(maxBytes / 1024 / 1024)
  return `the answer is larger than ${mb} MB, the most cms-sync reads for one listing (${cause.method} ${cause.route}); if the project really holds that much, raise limits.listingMB in cms-sync.yaml`
}

function isPlainObject(value: unknown): value is RemoteObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** An item the server lists from the parent project it inherits from (upstream §9). */
export function isInherited(item: RemoteObject): boolean {
  const sync = item.sync
  return typeof sync === 'object' && sync !== null && (sync as RemoteObject).isRemote === true
}

/** A project's own item whose id the parent project also has (upstream §9). */
function hasParentCopy(item: RemoteObject): boolean {
  const sync = item.sync
  return typeof sync === 'object' && sync !== null && (sync as RemoteObject).hasRemote === true
}

function withoutEntries(kind: RemoteKind, item: RemoteObject): RemoteObject {
  if (kind !== 'form' || !('entries' in item)) return item
  const { entries: _entries, ...rest } = item
  return rest
}

export async function createRemoteClient(opts: RemoteClientOptions): Promise<RemoteClient> {
  let dialect: Dialect | undefined = opts.dialect === 'auto' ? undefined : opts.dialect
  let token = opts.token || undefined
  const transport = createTransport({
    server: opts.server,
    rateLimit: opts.rateLimit,
    token,
    authHeaders: (t) => authHeaders(dialect, t),
    timeoutMs: opts.timeoutMs,
    maxRetries: opts.maxRetries,
    tlsInsecure: opts.tlsInsecure,
    logger: opts.logger,
    backoff: opts.backoff,
  })
  const P = projectPath(opts.project, opts.environment)
  const maxRetries = opts.maxRetries ?? 4
  const listMaxBytes = opts.listMaxBytes ?? DEFAULT_LIST_MAX_BYTES
  const listingCache = opts.listingCache
  try {
    dialect ??= await detectDialect(transport, opts.project, opts.environment)
  } catch (error) {
    await transport.close()
    throw error
  }
  const d: Dialect = dialect
  opts.logger?.debug({ dialect: d }, 'remote dialect')

  // Upstream forwards a by-id miss to the parent project it inherits from, and turns its own
  // sync off when the parent has no such id either (§9). Once a listing shows the server shares
  // items with a parent, an id the last listing lacked is looked up in a fresh listing instead.
  let sharesWithParent = false
  const listedIds = new Map<RemoteKind, Set<string>>()

  const itemPath = (kind: RemoteKind, id: string) => `${P}/${SEGMENT[kind]}/${encodeURIComponent(id)}`
  const textOf = (res: HttpResponse) => (typeof res.body === 'string' ? cleanServerMessage(res.body) : '')

  function fail(request: HttpRequest, res: HttpResponse, what?: string): RemoteError {
    return transport.failure(request, res, what, classify(d, res.status, textOf(res)))
  }

  function refuseId(kind: RemoteKind, id: string, method: string): void {
    const data = { method, route: itemPath(kind, id), itemId: id }
    if (id === '') throw remoteError('rejected', `cannot write a ${kind} with an empty id`, data)
    if (ROUTE_WORDS[kind].has(id))
      throw remoteError(
        'rejected',
        `"${id}" is a route word of the API and cannot be a ${kind} id; rename the item`,
        data,
      )
    if (kind === 'schema' && NATIVE_SCHEMA_IDS.has(id))
      throw remoteError('rejected', `"${id}" is a built-in schema of the server and cannot be changed`, data)
  }

  /** The item as the server stores it, entries included; undefined when it does not exist. */
  async function fetchItem(kind: RemoteKind, id: string): Promise<RemoteObject | undefined> {
    const request: HttpRequest = {
      method: 'GET',
      path: itemPath(kind, id),
      itemId: id,
      maxBytes: ITEM_MAX_BYTES,
    }
    const res = await transport.send(request)
    if (res.status < 200 || res.status >= 300) {
      if (isItemMissing(d, res.status, textOf(res))) return undefined
      throw fail(request, res, `could not read ${kind} "${id}"`)
    }
    if (!isPlainObject(res.body))
      throw remoteError(
        'rejected',
        `the server answered ${kind} "${id}" with something that is not a JSON object`,
        {
          method: 'GET',
          route: request.path,
          status: res.status,
          itemId: id,
        },
      )
    // Upstream answers an unknown form id with an empty form (§12.18).
    if (kind === 'form' && d === 'upstream' && res.body.id === '') return undefined
    return res.body
  }

  /** How each kind's last listing that `list` accepted was seen (its ETag, its sha1). */
  const listingMarkers = new Map<RemoteKind, ListingMarker>()

  function listingUnchanged(kind: RemoteKind): Promise<boolean> {
    return listingUnchangedSince(transport.send, `${P}/${SEGMENT[kind]}`, listingMarkers.get(kind))
  }

  /**
   * The listing as the server answers it, asked for with the kept ETag when one is kept: a 304
   * is answered from the kept text. A kept text that does not parse is dropped and the listing
   * read again in full. `unconditional` asks without it (watch's deep rescan: a server whose
   * ETag never changes cannot hide a change for ever), and keeps the answer.
   */
  async function readListing(
    name: string,
    cacheable: boolean,
    request: HttpRequest,
    lazy = false,
    unconditional = false,
  ): Promise<{ res: HttpResponse; keep?: () => Promise<void>; kept?: CachedListing }> {
    const cache = cacheable ? listingCache : undefined
    if (!cache) return { res: await transport.send(request) }
    const url = `${transport.server}${request.path}`
    const kept = unconditional ? undefined : await cache.read(name).catch(() => undefined)
    const usable = kept?.url === url ? kept : undefined
    const res = await transport.send({
      ...request,
      keepBytes: true,
      ...(usable ? { headers: { ...request.headers, 'if-none-match': usable.etag } } : {}),
    })
    if (res.status === 304 && usable) {
      // Parsed by whoever asks for the items (its sha256 matched: it parsed when it was kept).
      if (lazy)
        return {
          res: { status: 200, headers: { ...res.headers, etag: usable.etag }, body: undefined },
          kept: usable,
        }
      try {
        const body: unknown = JSON.parse(usable.text)
        return { res: { status: 200, headers: { ...res.headers, etag: usable.etag }, body }, kept: usable }
      } catch {
        return { res: await transport.send(request) }
      }
    }
    const etag = res.headers.etag
    const bytes = res.bytes
    if (!bytes || typeof etag !== 'string' || etag === '') return { res }
    // Kept by the caller once the listing is known good; a failed write costs only the next 304.
    const keep = () =>
      cache.write(name, { url, etag, bytes }).then(
        () => void forgotten.delete(name),
        (error: Error) => {
          opts.logger?.debug({ listing: name, error: error.message }, 'could not keep the listing')
        },
      )
    return { res, keep }
  }

  /** Kinds whose kept listing this process dropped and has not kept again since. */
  const forgotten = new Set<string>()

  /**
   * Before the tool's own write to a kind: its kept listing and its marker say what the server
   * held before it. A server whose ETag follows its content answers the next read in full anyway;
   * one whose ETag never changes (a proxy, a CDN) would answer 304 to the old listing for ever.
   */
  async function forgetListing(kind: RemoteKind): Promise<void> {
    listingMarkers.delete(kind)
    if (!NEVER_CACHED.has(kind)) await forgetKept(SEGMENT[kind])
  }

  async function forgetKept(name: string): Promise<void> {
    if (!listingCache || forgotten.has(name)) return
    forgotten.add(name)
    await listingCache.forget(name).catch((error: Error) => {
      forgotten.delete(name)
      opts.logger?.debug({ listing: name, error: error.message }, 'could not drop the kept listing')
    })
  }

  /** Kept listings answered 304 and not parsed yet: upstream's by-id reads need their ids. */
  const unparsed = new Map<RemoteKind, () => RemoteObject[]>()

  async function list(kind: RemoteKind, opts: { signal?: AbortSignal } = {}): Promise<RemoteObject[]> {
    return (await listing(kind, opts)).items()
  }

  async function listing(
    kind: RemoteKind,
    opts: { signal?: AbortSignal; unconditional?: boolean } = {},
  ): Promise<Listing> {
    const request: HttpRequest = {
      method: 'GET',
      path: `${P}/${SEGMENT[kind]}`,
      maxBytes: listMaxBytes,
      digest: true,
      ...(opts.signal ? { signal: opts.signal } : {}),
    }
    const data = { method: 'GET', route: request.path }
    let res: HttpResponse
    let keep: (() => Promise<void>) | undefined
    let kept: CachedListing | undefined
    try {
      const read = await readListing(
        SEGMENT[kind],
        !NEVER_CACHED.has(kind),
        request,
        true,
        opts.unconditional === true,
      )
      res = read.res
      keep = read.keep
      kept = read.kept
      if (res.status < 200 || res.status >= 300) throw fail(request, res)
    } catch (error) {
      if (opts.signal?.aborted) throw error
      // The cause's message already says where and what to do; the listing adds the safety part.
      const cause = error as RemoteError
      const lead = `could not list ${SEGMENT[kind]}, so nothing was changed: `
      const why = listingFailure(cause, listMaxBytes)
      throw new ListingError(
        'listing',
        `${lead}${why}`,
        { ...data, status: cause.status },
        {
          cause,
          exitCode: ExitCode.safetyStop,
          ...(why === cause.message ? { lead } : {}),
        },
      )
    }
    const marker = listingMarker(res)
    if (marker) listingMarkers.set(kind, marker)
    const etag = res.headers.etag
    const markClean = async (clean: string, dated?: readonly string[]) => {
      if (listingCache && typeof etag === 'string')
        // A mark not written costs the next run its shortcut, never a wrong answer.
        await listingCache.markClean(SEGMENT[kind], etag, clean, dated).catch(() => {})
    }
    if (kept) {
      const text = kept.text
      let items: RemoteObject[] | undefined
      const parse = () => {
        unparsed.delete(kind)
        items ??= accept(kind, JSON.parse(text), res.status, data)
        return items
      }
      // Only upstream's by-id reads need it; held otherwise, the body would outlive the run (an
      // idle watch would keep it between polls).
      if (d === 'upstream') unparsed.set(kind, parse)
      const clean = kept.clean ? { clean: kept.clean, ...(kept.dated ? { dated: kept.dated } : {}) } : {}
      return { items: parse, ...clean, markClean, kept: true }
    }
    const items = accept(kind, res.body, res.status, data)
    await keep?.()
    return { items: () => items, markClean }
  }

  /** A listing's body, checked item by item: what `list` gives. */
  function accept(
    kind: RemoteKind,
    body: unknown,
    status: number,
    data: { method: string; route: string },
  ): RemoteObject[] {
    if (!Array.isArray(body))
      throw remoteError('listing', `the ${SEGMENT[kind]} listing is not a JSON array`, { ...data, status })
    const seen = new Set<string>()
    const items: RemoteObject[] = []
    for (const [index, item] of body.entries()) {
      if (!isPlainObject(item) || typeof item.id !== 'string')
        throw remoteError('listing', `item ${index} of the ${SEGMENT[kind]} listing has no string id`, {
          ...data,
          status,
        })
      if (seen.has(item.id))
        throw remoteError(
          'listing',
          `the ${SEGMENT[kind]} listing holds the id "${item.id}" twice; remove the duplicate on the server`,
          { ...data, status, itemId: item.id },
        )
      seen.add(item.id)
      if (isInherited(item) || hasParentCopy(item)) sharesWithParent = true
      // Built-in schemas are the server's (locked, or in the known native set); never mirrored.
      // Schemas inherited from a parent project are locked too, but are the project's to mirror.
      if (
        kind === 'schema' &&
        (NATIVE_SCHEMA_IDS.has(item.id) || (item.isLocked === true && !isInherited(item)))
      )
        continue
      items.push(withoutEntries(kind, item))
    }
    listedIds.set(kind, seen)
    return items
  }

  /** fetchItem, without ever making upstream ask its parent for an id neither of them has. */
  async function readItem(kind: RemoteKind, id: string): Promise<RemoteObject | undefined> {
    // Whether the server shares items with a parent, and which ids it lists, as if every listing
    // read so far had been parsed.
    if (d === 'upstream') for (const parse of [...unparsed.values()]) parse()
    if (d === 'upstream' && sharesWithParent && !listedIds.get(kind)?.has(id)) {
      await list(kind)
      if (!listedIds.get(kind)?.has(id)) return undefined
    }
    return fetchItem(kind, id)
  }

  async function get(kind: RemoteKind, id: string): Promise<RemoteObject | undefined> {
    const item = await readItem(kind, id)
    return item && withoutEntries(kind, item)
  }

  /**
   * The body to send. Forms: never lose entries. Spec keeps the stored entries when the body
   * has none; upstream replaces them with the body's, so the current ones are fetched right
   * before the write and sent back (a submission landing in between is the one unavoidable gap).
   */
  async function bodyFor(kind: RemoteKind, id: string, body: RemoteObject): Promise<RemoteObject> {
    const sent: RemoteObject = { ...withoutEntries(kind, body), id }
    if (kind === 'form' && d === 'upstream') {
      const current = await readItem(kind, id)
      sent.entries = Array.isArray(current?.entries) ? current.entries : []
    }
    return sent
  }

  async function put(
    kind: RemoteKind,
    id: string,
    body: RemoteObject,
    putOpts?: PutOptions,
  ): Promise<RemoteObject> {
    refuseId(kind, id, 'POST')
    await forgetListing(kind)
    const request: HttpRequest = {
      method: 'POST',
      path: `${itemPath(kind, id)}?create=true`,
      itemId: id,
      idempotent: false,
      maxBytes: ITEM_MAX_BYTES,
    }
    for (let retry = 0; ; retry++) {
      const sent = await bodyFor(kind, id, body)
      try {
        const res = await transport.send({ ...request, body: sent })
        if (res.status < 200 || res.status >= 300) throw fail(request, res, `could not write ${kind} "${id}"`)
        // Upstream answers some writes with text (`OK`, the id): read back what is stored.
        const stored =
          isPlainObject(res.body) && typeof res.body.id === 'string' ? res.body : await readItem(kind, id)
        if (!stored)
          throw remoteError(
            'rejected',
            `the server accepted ${kind} "${id}" but does not have it afterwards`,
            {
              method: 'POST',
              route: request.path,
              status: res.status,
              itemId: id,
            },
          )
        listedIds.get(kind)?.add(id)
        return withoutEntries(kind, stored)
      } catch (error) {
        if (!isAmbiguous(error) || retry >= maxRetries) throw error
        // The server may have applied the write before failing: look before writing again.
        await sleep(backoffDelayMs(retry + 1, opts.backoff))
        const current = await readItem(kind, id)
        if (current && storedMatchesSent(sent, current)) {
          opts.logger?.debug({ kind, id }, 'ambiguous write had landed')
          return withoutEntries(kind, current)
        }
        const unchanged = putOpts?.expected
          ? putOpts.expected(current && withoutEntries(kind, current))
          : true
        if (!unchanged)
          throw remoteError(
            'conflict',
            `${kind} "${id}" changed on the server while cms-sync was writing it; it was not overwritten`,
            { method: 'POST', route: request.path, itemId: id },
            error,
          )
        opts.logger?.debug({ kind, id, retry: retry + 1 }, 'ambiguous write had not landed; writing again')
      }
    }
  }

  async function remove(kind: RemoteKind, id: string): Promise<void> {
    refuseId(kind, id, 'DELETE')
    await forgetListing(kind)
    // Content without removeChildren: children are separate items the engine deletes itself.
    const request: HttpRequest = { method: 'DELETE', path: itemPath(kind, id), itemId: id }
    const res = await transport.send(request)
    if (res.status >= 200 && res.status < 300) return
    if (isItemMissing(d, res.status, textOf(res))) return
    throw fail(request, res, `could not delete ${kind} "${id}"`)
  }

  /** pull/push of the server's Sync feature: re-sending either copies the same item again. */
  async function syncCall(kind: RemoteKind, verb: 'pull' | 'push', id: string): Promise<void> {
    refuseId(kind, id, 'POST')
    await forgetListing(kind)
    const request: HttpRequest = {
      method: 'POST',
      path: `${P}/${SEGMENT[kind]}/${verb}/${encodeURIComponent(id)}`,
      itemId: id,
      idempotent: true,
      responseType: 'text',
    }
    const res = await transport.send(request)
    if (res.status < 200 || res.status >= 300)
      throw fail(
        request,
        res,
        verb === 'pull'
          ? `could not make a local copy of inherited ${kind} "${id}"`
          : `could not send ${kind} "${id}" up to the parent project`,
      )
  }

  async function publish(verb: 'publish' | 'unpublish', item: RemoteObject): Promise<RemoteObject> {
    const id = String(item.id)
    const request: HttpRequest = {
      method: 'POST',
      path: `${P}/content/${verb}`,
      itemId: id,
      // Deploying the same item twice leaves what deploying it once does.
      idempotent: true,
      maxBytes: ITEM_MAX_BYTES,
    }
    const res = await transport.send({ ...request, body: item })
    if (res.status < 200 || res.status >= 300) throw fail(request, res, `could not ${verb} content "${id}"`)
    if (!isPlainObject(res.body) || typeof res.body.id !== 'string')
      throw remoteError('rejected', `the server's answer to ${verb} content "${id}" is not the item`, {
        method: 'POST',
        route: request.path,
        status: res.status,
        itemId: id,
      })
    return res.body
  }

  async function request(
    method: string,
    path: string,
    reqOpts: RequestOptions = {},
  ): Promise<RemoteResponse> {
    // `.../new` makes a new item (and `GET P/media/new` a new id) on every call, GET or not:
    // never repeated blindly after an ambiguous failure unless the caller says it is safe.
    const creates = /\/new$/.test(routeOf(path))
    const idempotent = reqOpts.idempotent ?? (creates ? false : undefined)
    return transport.send({
      method: method.toUpperCase(),
      path,
      ...reqOpts,
      ...(idempotent === undefined ? {} : { idempotent }),
    })
  }

  async function typesOf(which: 'deployers' | 'processors'): Promise<string[]> {
    const request: HttpRequest = { method: 'GET', path: `${P}/connections/${which}` }
    const res = await transport.send(request)
    if (res.status < 200 || res.status >= 300)
      throw fail(request, res, `could not read the server's ${which}`)
    if (!isPlainObject(res.body))
      throw remoteError('rejected', `the server's ${which} answer is not a JSON object`, {
        method: 'GET',
        route: request.path,
        status: res.status,
      })
    return Object.keys(res.body)
  }

  async function connectionTypes() {
    return { deployers: await typesOf('deployers'), processors: await typesOf('processors') }
  }

  async function formEntries(formId: string): Promise<RemoteObject[] | undefined> {
    const form = await fetchItem('form', formId)
    if (!form) return undefined
    return Array.isArray(form.entries) ? (form.entries as RemoteObject[]) : []
  }

  async function clearFormEntries(formId: string): Promise<void> {
    refuseId('form', formId, 'POST')
    const request: HttpRequest = {
      method: 'POST',
      path: `${P}/forms/clear/${encodeURIComponent(formId)}`,
      itemId: formId,
      // Clearing twice is clearing once: safe to retry after an ambiguous failure.
      idempotent: true,
    }
    const res = await transport.send(request)
    if (res.status < 200 || res.status >= 300)
      throw fail(request, res, `could not clear the entries of form "${formId}"`)
  }

  // A run checks the token before it writes (engine/plan-and-apply.ts); watch's edit runs come in bursts,
  // so a check that passed stands for a minute rather than costing a request per edit.
  let tokenChecked: { at: number; user: RemoteObject } | undefined
  async function checkToken(): Promise<RemoteObject> {
    if (tokenChecked && Date.now() - tokenChecked.at < TOKEN_CHECK_VALID_MS) return tokenChecked.user
    tokenChecked = undefined
    const user = await probeUser(transport, token)
    tokenChecked = { at: Date.now(), user }
    return user
  }

  async function clearExportedFormEntries(
    formId: string,
    exported: readonly RemoteObject[],
  ): Promise<{ cleared: number; kept: number }> {
    refuseId('form', formId, 'POST')
    // Read again right before clearing: the server's clear takes every entry, so an entry
    // submitted after the export must be written back instead of cleared. The gap left is this
    // one round trip (the API has no conditional clear).
    const current = await fetchItem('form', formId)
    if (!current)
      throw remoteError('rejected', `the server has no form "${formId}"`, {
        method: 'GET',
        route: itemPath('form', formId),
        itemId: formId,
      })
    const entries = Array.isArray(current.entries) ? (current.entries as RemoteObject[]) : []
    const unexported = new Map<string, number>()
    for (const entry of exported) {
      const key = JSON.stringify(entry)
      unexported.set(key, (unexported.get(key) ?? 0) + 1)
    }
    const remaining = entries.filter((entry) => {
      const key = JSON.stringify(entry)
      const left = unexported.get(key) ?? 0
      if (left === 0) return true
      unexported.set(key, left - 1)
      return false
    })
    if (remaining.length === 0) {
      await clearFormEntries(formId)
      return { cleared: entries.length, kept: 0 }
    }
    // The form as it was just read, with only the entries nobody has exported: both dialects
    // replace the stored entries with a body's. Never repeated blindly: a retry could drop an
    // entry submitted meanwhile.
    const request: HttpRequest = {
      method: 'POST',
      path: itemPath('form', formId),
      itemId: formId,
      idempotent: false,
      maxBytes: ITEM_MAX_BYTES,
    }
    const res = await transport.send({ ...request, body: { ...current, id: formId, entries: remaining } })
    if (res.status < 200 || res.status >= 300)
      throw fail(request, res, `could not clear the exported entries of form "${formId}"`)
    return { cleared: entries.length - remaining.length, kept: remaining.length }
  }

  return {
    dialect: d,
    target: { server: transport.server, project: opts.project, environment: opts.environment },
    listMaxBytes,
    list,
    listing,
    listingUnchanged,
    get,
    put,
    remove,
    pullInherited: (kind, id) => syncCall(kind, 'pull', id),
    pushToParent: (kind, id) => syncCall(kind, 'push', id),
    publish,
    request,
    readListing: async (name, path, reqOpts = {}) => {
      const read = await readListing(
        name,
        true,
        {
          method: 'GET',
          path,
          maxBytes: listMaxBytes,
          digest: true,
          ...(reqOpts.signal ? { signal: reqOpts.signal } : {}),
        },
        false,
        reqOpts.unconditional === true,
      )
      return {
        res: read.res,
        ...(read.keep ? { keep: read.keep } : {}),
        ...(read.kept ? { fromKept: true } : {}),
      }
    },
    forgetListing: (name) => forgetKept(name),
    connectionTypes,
    formEntries,
    clearFormEntries,
    clearExportedFormEntries,
    checkToken,
    setToken(next) {
      token = next
      tokenChecked = undefined
      transport.setToken(next)
    },
    stats: () => transport.stats(),
    close: () => transport.close(),
  }
}
