// What the client's modules (items, listings, form entries) share: the transport, the target's
// path, the dialect's row, and what the listings read so far say about the server.

import type { Logger } from 'pino'
import type { Answer } from './answer.js'
import type { Capabilities } from './capabilities.js'
import type { ListingValidators, RemoteObject } from './client-types.js'
import { NATIVE_SCHEMA_IDS, type RemoteKind, ROUTE_WORDS, SEGMENT } from './dialect.js'
import { remoteError } from './errors.js'
import type { Transport } from './http.js'
import type { BackoffPolicy } from './retry.js'

export const ITEM_MAX_BYTES = 64 * 1024 * 1024

export interface ClientContext {
  readonly transport: Transport
  /** `/api/<project>/<environment>`. */
  readonly P: string
  readonly capabilities: Capabilities
  readonly logger: Logger | undefined
  readonly backoff: BackoffPolicy | undefined
  readonly maxRetries: number
  /** The most one listing may weigh; the media listing keeps to it too. */
  readonly listMaxBytes: number
  /** Where the validators of the listings the bases equal are recorded (the run's state). */
  validators: ListingValidators | undefined
  /**
   * A listing check's 200 (listings.ts `listingUnchangedSince`): the changed listing, read once
   * and kept as the bytes it came in, for the full run that follows to take instead of asking
   * again.
   */
  checked: CheckedListing | undefined
  /** What the listings read so far say (listings.ts keeps it, items.ts reads it). */
  readonly seen: ListingsSeen
}

export interface CheckedListing {
  name: string
  path: string
  /** The 200 (its body is in `chunks`, never parsed as one). */
  answer: Answer
  chunks: Buffer[]
}

export interface ListingsSeen {
  /**
   * A listing showed an item inherited from, or shared with, a parent project (or answered 304
   * to a validator recorded when it did): then an id the last listing lacked is looked up in a
   * fresh listing before it is read by id (items.ts).
   */
  sharesWithParent: boolean
  /** The ids each kind's last accepted listing held. */
  readonly listedIds: Map<RemoteKind, Set<string>>
}

export function emptySeen(): ListingsSeen {
  return {
    sharesWithParent: false,
    listedIds: new Map(),
  }
}

export function isPlainObject(value: unknown): value is RemoteObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A form without its entries (people's submissions are never part of the form's file). */
export function withoutEntries(kind: RemoteKind, item: RemoteObject): RemoteObject {
  if (kind !== 'form' || !('entries' in item)) return item
  const { entries: _entries, ...rest } = item
  return rest
}

export function itemPath(ctx: ClientContext, kind: RemoteKind, id: string): string {
  return `${ctx.P}/${SEGMENT[kind]}/${encodeURIComponent(id)}`
}

/** Refuses, before any request, an id the API could never write or delete. */
export function refuseId(ctx: ClientContext, kind: RemoteKind, id: string, method: string): void {
  const data = { method, route: itemPath(ctx, kind, id), itemId: id }
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
