// A kind's listing: read (conditionally, with the validator the state recorded for the listing
// its bases equal, so an unchanged listing is one 304 and nothing is downloaded or parsed), checked item by item, and refused whole (a safety stop) when it failed or has the
// wrong shape: a listing is never read as "empty". It also notes what the items say of the
// server (ids, a parent project) for the by-id reads of items.ts.

import { ExitCode } from '../errors/exit-codes.js'
import type { Answer } from './answer.js'
import { type ClientContext, isPlainObject, withoutEntries } from './client-context.js'
import type { Listing, ListingValidator, RemoteObject } from './client-types.js'
import { NATIVE_SCHEMA_IDS, type RemoteKind, SEGMENT } from './dialect.js'
import { ListingError, listingNextStep, RemoteError, remoteError, withoutNextStep } from './errors.js'
import type { HttpRequest, HttpResponse } from './http.js'

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
  const answer = await ctx.transport.send({
    method: 'GET',
    path,
    headers: { 'if-none-match': validator.etag },
    maxBytes: ctx.listMaxBytes,
  })
  if (answer.kind === 'not-modified') return true
  if (answer.kind === 'retry' || answer.kind === 'ambiguous') throw answer.error
  // A failure (a 4xx, a body over the cap) is not kept: the full run asks again and says why.
  if (answer.kind === 'ok') ctx.checked = { name, path, answer }
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

/** The check's answer for `path`, taken once; undefined when the last check kept none for it. */
function takeChecked(ctx: ClientContext, path: string): Answer | undefined {
  const checked = ctx.checked
  if (checked?.path !== path) return undefined
  ctx.checked = undefined
  return checked.answer
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
  const checked = takeChecked(ctx, request.path)
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

export async function listing(
  ctx: ClientContext,
  kind: RemoteKind,
  opts: { signal?: AbortSignal; conditional?: boolean } = {},
): Promise<Listing> {
  const request: HttpRequest = {
    method: 'GET',
    path: `${ctx.P}/${SEGMENT[kind]}`,
    maxBytes: ctx.listMaxBytes,
    ...(opts.signal ? { signal: opts.signal } : {}),
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
  const { items, shares } = accept(ctx, kind, response.body, response.status, data)
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

/** A listing's body, checked item by item: what `list` gives. */
function accept(
  ctx: ClientContext,
  kind: RemoteKind,
  body: unknown,
  status: number,
  data: { method: string; route: string },
): { items: RemoteObject[]; shares: boolean } {
  if (!Array.isArray(body))
    throw remoteError('listing', `the ${SEGMENT[kind]} listing is not a JSON array`, { ...data, status })
  const seen = new Set<string>()
  const items: RemoteObject[] = []
  let shares = false
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
    if (isInherited(item) || hasParentCopy(item)) shares = true
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
  if (shares) ctx.seen.sharesWithParent = true
  return { items, shares }
}
