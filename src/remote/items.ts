// One item of a kind: read, write (a full document with ?create=true, body id = URL id), delete,
// and the server's Sync feature (pull an inherited item, push to the parent). A write whose
// answer was lost is settled by reading the item again, never by sending it blindly again.

import {
  type ClientContext,
  ITEM_MAX_BYTES,
  isPlainObject,
  itemPath,
  refuseId,
  withoutEntries,
} from './client-context.js'
import type { PutOptions, RemoteObject } from './client-types.js'
import { storedMatchesSent } from './compare.js'
import { type RemoteKind, SEGMENT } from './dialect.js'
import { type RemoteError, remoteError } from './errors.js'
import type { HttpRequest } from './http.js'
import { forgetListing, list } from './listings.js'
import { backoffDelayMs, sleep } from './retry.js'

/** The item as the server stores it, entries included; undefined when it does not exist. */
export async function fetchItem(
  ctx: ClientContext,
  kind: RemoteKind,
  id: string,
): Promise<RemoteObject | undefined> {
  const request: HttpRequest = {
    method: 'GET',
    path: itemPath(ctx, kind, id),
    itemId: id,
    maxBytes: ITEM_MAX_BYTES,
  }
  const answer = await ctx.transport.send(request)
  if (answer.kind === 'not-found' && answer.item) return undefined
  if (answer.kind !== 'ok') throw answer.fail(`could not read ${kind} "${id}"`)
  const { body, status } = answer.response
  if (!isPlainObject(body))
    throw remoteError(
      'rejected',
      `the server answered ${kind} "${id}" with something that is not a JSON object`,
      {
        method: 'GET',
        route: request.path,
        status,
        itemId: id,
      },
    )
  if (kind === 'form' && ctx.capabilities.items.unknownFormIsEmpty && body.id === '') return undefined
  return body
}

/**
 * fetchItem, without ever making a server that forwards by-id misses to its parent project ask
 * it for an id neither of them has (upstream turns its own sync off then, §9).
 */
export async function readItem(
  ctx: ClientContext,
  kind: RemoteKind,
  id: string,
): Promise<RemoteObject | undefined> {
  if (ctx.capabilities.items.byIdMissAsksParent) {
    const { seen } = ctx
    // Whether the server shares items with a parent, and which ids each kind's last listing held.
    if (seen.sharesWithParent && !seen.listedIds.get(kind)?.has(id)) {
      await list(ctx, kind)
      if (!seen.listedIds.get(kind)?.has(id)) return undefined
    }
  }
  return fetchItem(ctx, kind, id)
}

export async function get(
  ctx: ClientContext,
  kind: RemoteKind,
  id: string,
): Promise<RemoteObject | undefined> {
  const item = await readItem(ctx, kind, id)
  return item && withoutEntries(kind, item)
}

/**
 * The body to send. Forms: never lose entries. Where a write replaces the stored entries with
 * the body's, the current ones are fetched right before the write and sent back (a submission
 * landing in between is the one unavoidable gap).
 */
async function bodyFor(
  ctx: ClientContext,
  kind: RemoteKind,
  id: string,
  body: RemoteObject,
): Promise<RemoteObject> {
  const sent: RemoteObject = { ...withoutEntries(kind, body), id }
  if (kind === 'form' && ctx.capabilities.items.formWriteReplacesEntries) {
    const current = await readItem(ctx, kind, id)
    sent.entries = Array.isArray(current?.entries) ? current.entries : []
  }
  return sent
}

export async function put(
  ctx: ClientContext,
  kind: RemoteKind,
  id: string,
  body: RemoteObject,
  putOpts?: PutOptions,
): Promise<RemoteObject> {
  refuseId(ctx, kind, id, 'POST')
  forgetListing(ctx, SEGMENT[kind])
  const request: HttpRequest = {
    method: 'POST',
    path: `${itemPath(ctx, kind, id)}?create=true`,
    itemId: id,
    idempotent: false,
    maxBytes: ITEM_MAX_BYTES,
  }
  for (let retry = 0; ; retry++) {
    const sent = await bodyFor(ctx, kind, id, body)
    const answer = await ctx.transport.send({ ...request, body: sent })
    switch (answer.kind) {
      case 'ok':
        return written(ctx, kind, id, answer.response, request.path)
      case 'ambiguous':
        if (retry >= ctx.maxRetries) throw answer.error
        break
      default:
        throw answer.fail(`could not write ${kind} "${id}"`)
    }
    // The server may have applied the write before failing: look before writing again.
    await sleep(backoffDelayMs(retry + 1, ctx.backoff))
    const landed = await settleAmbiguousWrite(
      ctx,
      { kind, id, sent, route: request.path },
      answer.error,
      putOpts,
    )
    if (landed) return landed
    ctx.logger?.debug({ kind, id, retry: retry + 1 }, 'ambiguous write had not landed; writing again')
  }
}

/** What a write stored, as the server answers it (or, when it answers with text, reads it back). */
async function written(
  ctx: ClientContext,
  kind: RemoteKind,
  id: string,
  response: { status: number; body: unknown },
  route: string,
): Promise<RemoteObject> {
  // Upstream answers some writes with text (`OK`, the id): read back what is stored.
  const stored =
    isPlainObject(response.body) && typeof response.body.id === 'string'
      ? response.body
      : await readItem(ctx, kind, id)
  if (!stored)
    throw remoteError('rejected', `the server accepted ${kind} "${id}" but does not have it afterwards`, {
      method: 'POST',
      route,
      status: response.status,
      itemId: id,
    })
  ctx.seen.listedIds.get(kind)?.add(id)
  return withoutEntries(kind, stored)
}

/**
 * After a write that may or may not have landed: the item as stored now, when it is what was
 * sent (the write landed); undefined when the write may be sent again (the item is still what
 * the caller planned against); RemoteConflictError when it changed meanwhile.
 */
export async function settleAmbiguousWrite(
  ctx: ClientContext,
  write: { kind: RemoteKind; id: string; sent: RemoteObject; route: string },
  error: RemoteError,
  putOpts?: PutOptions,
): Promise<RemoteObject | undefined> {
  const { kind, id } = write
  const current = await readItem(ctx, kind, id)
  if (current && storedMatchesSent(write.sent, current)) {
    ctx.logger?.debug({ kind, id }, 'ambiguous write had landed')
    return withoutEntries(kind, current)
  }
  const unchanged = putOpts?.expected ? putOpts.expected(current && withoutEntries(kind, current)) : true
  if (!unchanged)
    throw remoteError(
      'conflict',
      `${kind} "${id}" changed on the server while cms-sync was writing it; it was not overwritten`,
      { method: 'POST', route: write.route, itemId: id },
      error,
    )
  return undefined
}

export async function remove(ctx: ClientContext, kind: RemoteKind, id: string): Promise<void> {
  refuseId(ctx, kind, id, 'DELETE')
  forgetListing(ctx, SEGMENT[kind])
  // Content without removeChildren: children are separate items the engine deletes itself.
  const answer = await ctx.transport.send({ method: 'DELETE', path: itemPath(ctx, kind, id), itemId: id })
  if (answer.kind === 'ok' || (answer.kind === 'not-found' && answer.item)) return
  throw answer.fail(`could not delete ${kind} "${id}"`)
}

/** pull/push of the server's Sync feature: re-sending either copies the same item again. */
export async function syncCall(
  ctx: ClientContext,
  kind: RemoteKind,
  verb: 'pull' | 'push',
  id: string,
): Promise<void> {
  refuseId(ctx, kind, id, 'POST')
  forgetListing(ctx, SEGMENT[kind])
  const answer = await ctx.transport.send({
    method: 'POST',
    path: `${ctx.P}/${SEGMENT[kind]}/${verb}/${encodeURIComponent(id)}`,
    itemId: id,
    idempotent: true,
    responseType: 'text',
  })
  if (answer.kind !== 'ok')
    throw answer.fail(
      verb === 'pull'
        ? `could not make a local copy of inherited ${kind} "${id}"`
        : `could not send ${kind} "${id}" up to the parent project`,
    )
}
