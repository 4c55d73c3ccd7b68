// A kind's listing: read (conditionally, with the validator the state recorded for the listing
// its bases equal, so an unchanged listing is one 304 and nothing is downloaded or parsed), checked item by item, and refused whole (a safety stop) when it failed or has the
// wrong shape: a listing is never read as "empty". It also notes what the items say of the
// server (ids, a parent project) for the by-id reads of items.ts.

import { ExitCode } from '../errors/exit-codes.js'
import type { Answer } from './answer.js'
import { ArrayItems } from './array-items.js'
import { type ClientContext, isPlainObject, withoutEntries } from './client-context.js'
import type { Listing, ListingOptions, ListingValidator, RemoteObject } from './client-types.js'
import { NATIVE_SCHEMA_IDS, type RemoteKind, SEGMENT } from './dialect.js'
import { ListingError, listingNextStep, RemoteError, remoteError, withoutNextStep } from './errors.js'
import { decode, type HttpRequest, type HttpResponse } from './http.js'

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

/**
 * Whether the listing `name` at `path` is still the one the bases equal: one request with
 * If-None-Match of the recorded validator, answered 304. False when no validator is recorded
 * (nothing is known to be the bases) or the listing changed. A 200 is the changed listing itself:
 * read once (capped like any listing) and kept for the full run that follows, which takes it
 * instead of asking again (`readListing`), so a remote change costs one download of the listing,
 * not two (docs/remote-client.md, "Conditional listings"). Only the last check's answer is kept.
 */
export async function listingUnchangedSince(
  ctx: ClientContext,
  name: string,
  path: string,
): Promise<boolean> {
  ctx.checked = undefined
  const validator = usableValidator(ctx, name, path)
  if (!validator) return false
  // Kept as the bytes it came in (capped like any listing): the run that takes it reads it item
  // by item, as it would read the answer itself.
  let chunks: Buffer[] = []
  const answer = await ctx.transport.send({
    method: 'GET',
    path,
    headers: { 'if-none-match': validator.etag },
    maxBytes: ctx.listMaxBytes,
    sink: async (body) => {
      chunks = []
      for await (const chunk of body) chunks.push(chunk)
    },
  })
  if (answer.kind === 'not-modified') return true
  if (answer.kind === 'retry' || answer.kind === 'ambiguous') throw answer.error
  // A failure (a 4xx, a body over the cap) is not kept: the full run asks again and says why.
  if (answer.kind === 'ok') ctx.checked = { name, path, answer, chunks }
  return false
}

/** Whether the kind's listing is still the one its bases equal (watch's quiet poll). */
export function listingUnchanged(ctx: ClientContext, kind: RemoteKind): Promise<boolean> {
  return listingUnchangedSince(ctx, SEGMENT[kind], `${ctx.P}/${SEGMENT[kind]}`)
}

/** Drops a check's answer that no run took: read later, it would be a stale listing. */
export function forgetCheckedListings(ctx: ClientContext): void {
  ctx.checked = undefined
}

/**
 * The check's answer for `path`, taken once; undefined when the last check kept none for it. Its
 * body goes to the request's sink, as the server's would; without one it is decoded whole.
 */
async function takeChecked(ctx: ClientContext, request: HttpRequest): Promise<Answer | undefined> {
  const checked = ctx.checked
  if (checked?.path !== request.path || checked.answer.kind !== 'ok') return undefined
  ctx.checked = undefined
  const { answer, chunks } = checked
  if (request.sink) {
    await request.sink(
      (async function* () {
        yield* chunks
      })(),
    )
    return answer
  }
  const contentType = String(answer.response.headers['content-type'] ?? '')
  const body = decode(Buffer.concat(chunks), contentType, request.responseType ?? 'auto')
  return { ...answer, response: { ...answer.response, body } }
}

/** The recorded validator of `name`, when it was recorded for this very URL. */
function usableValidator(ctx: ClientContext, name: string, path: string): ListingValidator | undefined {
  const validator = ctx.validators?.validatorOf(name)
  return validator?.url === `${ctx.transport.server}${path}` ? validator : undefined
}

/** A listing as read: the answer, and on a 200 the validator that names it. */
export interface ListingAnswer {
  answer: Answer
  /** The 200's ETag with its URL, when the server sent one. */
  validator?: ListingValidator
  /** The server answered 304 to the recorded validator: the listing is the bases. */
  unchanged?: ListingValidator
}

/**
 * The listing as the server answers it; `conditional`: asked with If-None-Match of the recorded
 * validator, so a listing equal to the bases is a 304 and nothing is downloaded or parsed.
 */
export async function readListing(
  ctx: ClientContext,
  name: string,
  request: HttpRequest,
  conditional: boolean,
): Promise<ListingAnswer> {
  const checked = await takeChecked(ctx, request)
  // The listing the check just read in full: as good as a fresh unconditional read.
  if (checked) return { answer: checked, ...validatorOf(ctx, request.path, checked) }
  const validator = conditional ? usableValidator(ctx, name, request.path) : undefined
  const answer = await ctx.transport.send({
    ...request,
    ...(validator ? { headers: { ...request.headers, 'if-none-match': validator.etag } } : {}),
  })
  if (answer.kind === 'not-modified' && validator) {
    // The same listing as when the validator was recorded: one that shared items with the parent
    // project still does (its ids unseen, by-id reads list it first: items.ts); one that shared
    // nothing still does not.
    if (validator.parent) ctx.seen.sharesWithParent = true
    return { answer, unchanged: validator }
  }
  if (answer.kind === 'not-modified')
    // A 304 to a request that named no validator: a broken server or proxy, never "the bases".
    return { answer: await ctx.transport.send(request) }
  return { answer, ...validatorOf(ctx, request.path, answer) }
}

/** A 200's ETag with its URL, when the server sent one. */
function validatorOf(ctx: ClientContext, path: string, answer: Answer): { validator?: ListingValidator } {
  if (answer.kind !== 'ok') return {}
  const { etag } = answer.response.headers
  const url = `${ctx.transport.server}${path}`
  return typeof etag === 'string' && etag !== '' ? { validator: { url, etag } } : {}
}

/**
 * Before the tool's own write to a kind: its validator says what the server held before it. A
 * server whose ETag follows its content answers the next read in full anyway; one whose ETag
 * never changes (a proxy, a CDN) would answer 304 to the old listing for ever.
 */
export function forgetListing(ctx: ClientContext, name: string): void {
  ctx.validators?.dropValidator(name)
  if (ctx.checked?.name === name) ctx.checked = undefined
}

export async function list(
  ctx: ClientContext,
  kind: RemoteKind,
  opts: { signal?: AbortSignal } = {},
): Promise<RemoteObject[]> {
  return (await listing(ctx, kind, opts)).items()
}

export async function listing<T = RemoteObject>(
  ctx: ClientContext,
  kind: RemoteKind,
  opts: ListingOptions<T> = {},
): Promise<Listing<T>> {
  const take = opts.take ?? ((item: RemoteObject) => item as T)
  // Read item by item as the body arrives, never as one string (array-items.ts); a read that
  // is tried again starts over.
  let reader: ListingReader<T> | undefined
  const request: HttpRequest = {
    method: 'GET',
    path: `${ctx.P}/${SEGMENT[kind]}`,
    maxBytes: ctx.listMaxBytes,
    ...(opts.signal ? { signal: opts.signal } : {}),
    sink: async (body) => {
      const read = new ListingReader(kind, take)
      reader = read
      for await (const chunk of body) read.push(chunk)
      read.end()
    },
  }
  const data = { method: 'GET', route: request.path }
  const { response, validator, unchanged } = await readOrRefuse(ctx, kind, request, opts)
  if (unchanged)
    return {
      items: () => {
        throw new Error(`the ${SEGMENT[kind]} listing answered 304: its items are the bases, not read`)
      },
      unchanged,
    }
  const { items, shares } = accept(ctx, kind, reader, response, data)
  const recordable = validator && (shares ? { ...validator, parent: true as const } : validator)
  return { items: () => items, ...(recordable ? { validator: recordable } : {}) }
}

/** The listing's answer, or the ListingError (a safety stop, exit 4) that says why there is none. */
async function readOrRefuse(
  ctx: ClientContext,
  kind: RemoteKind,
  request: HttpRequest,
  opts: { signal?: AbortSignal; conditional?: boolean },
): Promise<{ response: HttpResponse } & Omit<ListingAnswer, 'answer'>> {
  try {
    const { answer, validator, unchanged } = await readListing(
      ctx,
      SEGMENT[kind],
      request,
      opts.conditional === true,
    )
    if (unchanged) return { response: (answer as { response: HttpResponse }).response, unchanged }
    if (answer.kind !== 'ok') throw answer.fail()
    return { response: answer.response, ...(validator ? { validator } : {}) }
  } catch (error) {
    if (opts.signal?.aborted) throw error
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

/**
 * A listing's body as it arrives, checked item by item: what `list` gives (or what `take` keeps
 * of each item). The first item the listing may not hold is noted and said once the whole body
 * was read, so a body that is not JSON is said so first, as when it was parsed whole.
 */
class ListingReader<T> {
  readonly items: T[] = []
  readonly seen = new Set<string>()
  shares = false
  refused: { message: string; itemId?: string } | undefined
  /** What `take` threw: passed on as it is (a fault of the caller's, not of the server's). */
  failure: { error: unknown } | undefined
  private readonly split = new ArrayItems((item, index) => this.accept(item, index))
  valid = false

  constructor(
    private readonly kind: RemoteKind,
    private readonly take: (item: RemoteObject) => T,
  ) {}

  push(chunk: Buffer): void {
    this.split.push(chunk)
  }

  end(): void {
    this.valid = this.split.end()
  }

  private accept(item: unknown, index: number): void {
    if (this.refused || this.failure) return
    const kind = this.kind
    if (!isPlainObject(item) || typeof item.id !== 'string') {
      this.refused = { message: `item ${index} of the ${SEGMENT[kind]} listing has no string id` }
      return
    }
    if (this.seen.has(item.id)) {
      this.refused = {
        message: `the ${SEGMENT[kind]} listing holds the id "${item.id}" twice; remove the duplicate on the server`,
        itemId: item.id,
      }
      return
    }
    this.seen.add(item.id)
    if (isInherited(item) || hasParentCopy(item)) this.shares = true
    // Built-in schemas are the server's (locked, or in the known native set); never mirrored.
    // Schemas inherited from a parent project are locked too, but are the project's to mirror.
    if (
      kind === 'schema' &&
      (NATIVE_SCHEMA_IDS.has(item.id) || (item.isLocked === true && !isInherited(item)))
    )
      return
    try {
      this.items.push(this.take(withoutEntries(kind, item)))
    } catch (error) {
      this.failure = { error }
    }
  }
}

/** The listing as its reader left it: refused (not a JSON array of items with ids) or accepted. */
function accept<T>(
  ctx: ClientContext,
  kind: RemoteKind,
  reader: ListingReader<T> | undefined,
  response: HttpResponse,
  data: { method: string; route: string },
): { items: T[]; shares: boolean } {
  const { status } = response
  // Read as JSON only when the server says it is (as any answer is): a page of text is no listing.
  const json = /\bjson\b/i.test(String(response.headers['content-type'] ?? ''))
  if (!reader?.valid || !json)
    throw remoteError('listing', `the ${SEGMENT[kind]} listing is not a JSON array`, { ...data, status })
  if (reader.refused) {
    const { message, itemId } = reader.refused
    throw remoteError('listing', message, { ...data, status, ...(itemId === undefined ? {} : { itemId }) })
  }
  if (reader.failure) throw reader.failure.error
  ctx.seen.listedIds.set(kind, reader.seen)
  if (reader.shares) ctx.seen.sharesWithParent = true
  return { items: reader.items, shares: reader.shares }
}
