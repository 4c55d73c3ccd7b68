// A kind's listing: read (with the kept ETag when a listing cache is set, so an unchanged listing
// is one 304), checked item by item, and refused whole (a safety stop) when it failed or has the
// wrong shape: a listing is never read as "empty". It also notes what the items say of the
// server (ids, a parent project) for the by-id reads of items.ts.

import { ExitCode } from '../errors/exit-codes.js'
import type { Answer } from './answer.js'
import { type ClientContext, isPlainObject, withoutEntries } from './client-context.js'
import type { Listing, RemoteObject } from './client-types.js'
import { NATIVE_SCHEMA_IDS, type RemoteKind, SEGMENT } from './dialect.js'
import { ListingError, listingNextStep, RemoteError, remoteError, withoutNextStep } from './errors.js'
import type { HttpRequest, HttpResponse } from './http.js'
import { type CachedListing, NEVER_CACHED } from './listing-cache.js'
import { listingMarker, listingUnchangedSince } from './listing-marker.js'

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

/** Whether the kind's listing is byte for byte what the last accepted `listing` read. */
export function listingUnchanged(ctx: ClientContext, kind: RemoteKind): Promise<boolean> {
  return listingUnchangedSince(
    (request) => ctx.transport.send(request),
    `${ctx.P}/${SEGMENT[kind]}`,
    ctx.seen.markers.get(kind),
  )
}

/** A listing as read: the answer, how to keep it, and the kept copy a 304 stands for. */
export interface ListingAnswer {
  answer: Answer
  /** Keeps this answer for the next conditional read; call it once the listing is known good. */
  keep?: () => Promise<void>
  /** The server answered 304: this kept copy is the listing (the answer is `ok`). */
  kept?: CachedListing
}

/**
 * The listing as the server answers it, asked for with the kept ETag when one is kept: a 304
 * is answered from the kept text, as `ok`. A kept text that does not parse is dropped and the
 * listing read again in full. `lazy`: the kept text is parsed by whoever asks for the items.
 * `unconditional` asks without it (watch's deep rescan: a server whose ETag never changes cannot
 * hide a change for ever), and keeps the answer.
 */
export async function readListing(
  ctx: ClientContext,
  name: string,
  cacheable: boolean,
  request: HttpRequest,
  lazy = false,
  unconditional = false,
): Promise<ListingAnswer> {
  const cache = cacheable ? ctx.listingCache : undefined
  if (!cache) return { answer: await ctx.transport.send(request) }
  const url = `${ctx.transport.server}${request.path}`
  const kept = unconditional ? undefined : await cache.read(name).catch(() => undefined)
  const usable = kept?.url === url ? kept : undefined
  const answer = await ctx.transport.send({
    ...request,
    keepBytes: true,
    ...(usable ? { headers: { ...request.headers, 'if-none-match': usable.etag } } : {}),
  })
  if (answer.kind === 'not-modified' && usable) return fromKept(ctx, answer.response, usable, request, lazy)
  if (answer.kind !== 'ok') return { answer }
  const { etag } = answer.response.headers
  const bytes = answer.response.bytes
  if (!bytes || typeof etag !== 'string' || etag === '') return { answer }
  // Kept by the caller once the listing is known good; a failed write costs only the next 304.
  const keep = () =>
    cache.write(name, { url, etag, bytes }).then(
      () => void ctx.seen.forgotten.delete(name),
      (error: Error) => {
        ctx.logger?.debug({ listing: name, error: error.message }, 'could not keep the listing')
      },
    )
  return { answer, keep }
}

/** A 304 answered from the kept copy (its sha256 matched: it parsed when it was kept). */
async function fromKept(
  ctx: ClientContext,
  notModified: HttpResponse,
  usable: CachedListing,
  request: HttpRequest,
  lazy: boolean,
): Promise<ListingAnswer> {
  const headers = { ...notModified.headers, etag: usable.etag }
  const ok = (body: unknown): Answer => ({ kind: 'ok', response: { status: 200, headers, body } })
  if (lazy) return { answer: ok(undefined), kept: usable }
  try {
    return { answer: ok(JSON.parse(usable.text)), kept: usable }
  } catch {
    return { answer: await ctx.transport.send(request) }
  }
}

/**
 * Before the tool's own write to a kind: its kept listing and its marker say what the server
 * held before it. A server whose ETag follows its content answers the next read in full anyway;
 * one whose ETag never changes (a proxy, a CDN) would answer 304 to the old listing for ever.
 */
export async function forgetListing(ctx: ClientContext, kind: RemoteKind): Promise<void> {
  ctx.seen.markers.delete(kind)
  if (!NEVER_CACHED.has(kind)) await forgetKept(ctx, SEGMENT[kind])
}

export async function forgetKept(ctx: ClientContext, name: string): Promise<void> {
  const { listingCache, seen } = ctx
  if (!listingCache || seen.forgotten.has(name)) return
  seen.forgotten.add(name)
  await listingCache.forget(name).catch((error: Error) => {
    seen.forgotten.delete(name)
    ctx.logger?.debug({ listing: name, error: error.message }, 'could not drop the kept listing')
  })
}

export async function list(
  ctx: ClientContext,
  kind: RemoteKind,
  opts: { signal?: AbortSignal } = {},
): Promise<RemoteObject[]> {
  return (await listing(ctx, kind, opts)).items()
}

export async function listing(
  ctx: ClientContext,
  kind: RemoteKind,
  opts: { signal?: AbortSignal; unconditional?: boolean } = {},
): Promise<Listing> {
  const request: HttpRequest = {
    method: 'GET',
    path: `${ctx.P}/${SEGMENT[kind]}`,
    maxBytes: ctx.listMaxBytes,
    digest: true,
    ...(opts.signal ? { signal: opts.signal } : {}),
  }
  const data = { method: 'GET', route: request.path }
  const { response, keep, kept } = await readOrRefuse(
    ctx,
    kind,
    request,
    opts.signal,
    opts.unconditional === true,
  )
  const marker = listingMarker(response)
  if (marker) ctx.seen.markers.set(kind, marker)
  const { etag } = response.headers
  const markClean = async (clean: string, dated?: readonly string[]) => {
    if (ctx.listingCache && typeof etag === 'string')
      // A mark not written costs the next run its shortcut, never a wrong answer.
      await ctx.listingCache.markClean(SEGMENT[kind], etag, clean, dated).catch(() => {})
  }
  if (kept) {
    const text = kept.text
    let items: RemoteObject[] | undefined
    const parse = () => {
      ctx.seen.unparsed.delete(kind)
      items ??= accept(ctx, kind, JSON.parse(text), response.status, data)
      return items
    }
    // Only by-id reads that may ask the parent need it; held otherwise, the body would outlive
    // the run (an idle watch would keep it between polls).
    if (ctx.capabilities.items.byIdMissAsksParent) ctx.seen.unparsed.set(kind, parse)
    const clean = kept.clean ? { clean: kept.clean, ...(kept.dated ? { dated: kept.dated } : {}) } : {}
    return { items: parse, ...clean, markClean, kept: true }
  }
  const items = accept(ctx, kind, response.body, response.status, data)
  await keep?.()
  return { items: () => items, markClean }
}

/** The listing's answer, or the ListingError (a safety stop, exit 4) that says why there is none. */
async function readOrRefuse(
  ctx: ClientContext,
  kind: RemoteKind,
  request: HttpRequest,
  signal: AbortSignal | undefined,
  unconditional: boolean,
): Promise<{ response: HttpResponse } & Omit<ListingAnswer, 'answer'>> {
  try {
    const { answer, keep, kept } = await readListing(
      ctx,
      SEGMENT[kind],
      !NEVER_CACHED.has(kind),
      request,
      true,
      unconditional,
    )
    if (answer.kind !== 'ok') throw answer.fail()
    return { response: answer.response, ...(keep ? { keep } : {}), ...(kept ? { kept } : {}) }
  } catch (error) {
    if (signal?.aborted) throw error
    // The cause's message already says where and what to do; the listing adds the safety part.
    const cause = error as RemoteError
    const lead = `could not list ${SEGMENT[kind]}, so nothing was changed: `
    const why = listingFailure(cause, ctx.listMaxBytes)
    throw new ListingError(
      'listing',
      `${lead}${why}`,
      { method: 'GET', route: request.path, status: cause.status },
      { cause, exitCode: ExitCode.safetyStop, ...(why === cause.message ? { lead } : {}) },
    )
  }
}

/** A listing's body, checked item by item: what `list` gives. */
function accept(
  ctx: ClientContext,
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
    if (isInherited(item) || hasParentCopy(item)) ctx.seen.sharesWithParent = true
    // Built-in schemas are the server's (locked, or in the known native set); never mirrored.
    // Schemas inherited from a parent project are locked too, but are the project's to mirror.
    if (
      kind === 'schema' &&
      (NATIVE_SCHEMA_IDS.has(item.id) || (item.isLocked === true && !isInherited(item)))
    )
      continue
    items.push(withoutEntries(kind, item))
  }
  ctx.seen.listedIds.set(kind, seen)
  return items
}
