// The remote side of the three-way comparison, from the listing requests alone whenever it can:
// an item whose revision marker equals the base's is unchanged, so its listed copy is never
// re-read. Only changed items whose list form is known to be incomplete (upstream content has
// publishOn null in lists) are fetched by id, because their real dates decide their hash.
//
// A listing that answered 304 needs less still. When a run finds the state's own bases to be
// that listing item for item (same items, same revisions, same inheritance, nothing to report),
// the kept copy can be marked with the saved state's digest (listing-cache.ts; status does, as
// it ends: a run that stops changes nothing, not even a kept head). The next run that
// gets a 304 for it, with the state still that file, knows every server item is its base: the
// remote side is the state's, and the kept copy is parsed only if an item's server copy is read
// (a push's checks, a status's schedule). A status that saw a server change leaves the state
// behind the listing, so it marks nothing; a pull that took every change leaves them equal, and
// the next status marks it. Any change to the state (a commit, a kill halfway through a run's
// saves) changes its digest, and any change on the server its ETag: the mark then says nothing.

import { findCause } from '../errors/find-cause.js'
import { isInherited } from '../remote/client.js'
import { RemoteError } from '../remote/errors.js'
import type { ItemState } from '../state/state-file.js'
import {
  type Codec,
  type FileBytes,
  fileBytes,
  type JsonObject,
  type ListingCapabilities,
} from '../workspace/codec.js'
import { UnsafeIdError } from '../workspace/file-names.js'
import { nestsDeeperThan, tooDeepMessage } from '../workspace/json-depth.js'
import { FOLDER_OF, type Kind } from '../workspace/kinds.js'
import { itemPath } from '../workspace/layout.js'
import type { Version } from './plan.js'
import type { ListingRead, RemotePort } from './remote-port.js'

export interface RemoteEntry extends Version {
  rev: string
  object: JsonObject
  /** False when object came from a list answer that lacks fields (see Codec.listIsIncomplete). */
  complete: boolean
  /** Listed from the parent project the server inherits from (`sync.isRemote`): locked there. */
  inherited: boolean
  /** The file's bytes, when the hash was computed from them (a changed item): a pull reuses them. */
  bytes?: FileBytes
  /** Codec.schedules of the listed copy, when a marked kept listing says it without a parse. */
  schedules?: boolean
}

export interface RemoteSnapshot {
  entries: Map<string, RemoteEntry>
  /** Items the server holds that cannot be mirrored (an id no file name can hold). */
  problems: RemoteProblem[]
  /** Marks the kept listings the state was found to match (see the top of the file). */
  markListings?: () => Promise<void>
}

export interface RemoteProblem {
  kind: Kind
  id: string
  problem: string
  /** The item's path, when it has one that the run must leave alone on both sides (see ScanProblem). */
  unsynced?: string
  /** Where the item's file is or would be; the kind's folder (`content/`) for an id no file name can hold. */
  path?: string
}

export class ListingFailedError extends Error {
  constructor(
    readonly kind: Kind,
    cause: unknown,
  ) {
    super(`the server's ${kind} listing failed (${(cause as Error).message ?? String(cause)})`, { cause })
  }
}

/** A missing or refused token (exit 2, log in). A 403 is a listing this user may not read: a safety stop. */
function isRefusedToken(error: unknown): boolean {
  return error instanceof RemoteError && error.code === 'unauthorized'
}

/**
 * Asks for every kind's listing at once, so they arrive while the run reads the workspace. A
 * failure surfaces where snapshotRemote awaits it; until then it is held, not unhandled. A run
 * that stops early aborts `signal`, so no listing or retry outlives it. `unconditional`: without
 * the kept ETags (watch's deep rescan).
 */
export function requestListings(
  client: RemotePort,
  codecs: readonly Codec[],
  signal: AbortSignal,
  unconditional = false,
): Listings {
  return new Map(
    codecs.map((codec) => [codec.kind, settleLater(readListing(client, codec.kind, signal, unconditional))]),
  )
}

export type Listings = ReadonlyMap<Kind, Promise<ListingRead>>

function readListing(
  client: RemotePort,
  kind: Kind,
  signal?: AbortSignal,
  unconditional = false,
): Promise<ListingRead> {
  const opts = signal ? { signal } : {}
  if (client.listing) return client.listing(kind, unconditional ? { ...opts, unconditional } : opts)
  return client.list(kind, opts).then((items) => ({ items: () => items }))
}

/** What the remote side reads of the state (a StateStore, and the digest of its saved file). */
export interface SnapshotState {
  /** The base of a path; given the listed revision, the base that saw it if one did (StateStore.baseAt). */
  baseAt(path: string, rev: string): ItemState | undefined
  /** The state's own base of a path (never the lock's). */
  get(path: string): ItemState | undefined
  items(kind: Kind): ItemState[]
  /** The digest of the saved state, while the one in memory is still that (state-file.ts). */
  digest: string | undefined
}

/** A failed listing: a refused token is the user's to fix (log in); anything else a safety stop. */
function listingFailure(kind: Kind, error: unknown): Error {
  // The client's listing error wraps the refusal once.
  return findCause(error, isRefusedToken, 2) ?? new ListingFailedError(kind, error)
}

/** The promise itself, marked as handled: a run that stops early never awaits it. */
export function settleLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}

export async function snapshotRemote(
  client: RemotePort,
  codecs: readonly Codec[],
  state: SnapshotState,
  ignored: (path: string) => boolean = () => false,
  /** Listings already asked for (requestListings); a kind missing here is listed now. */
  listings?: Listings,
): Promise<RemoteSnapshot> {
  const entries = new Map<string, RemoteEntry>()
  const problems: RemoteSnapshot['problems'] = []
  const matching: Array<{ read: ListingRead; dated?: string[] }> = []
  for (const codec of codecs) {
    let read: ListingRead
    let listed: JsonObject[]
    try {
      read = await (listings?.get(codec.kind) ?? readListing(client, codec.kind))
      if (state.digest !== undefined && read.clean === state.digest) {
        keptSide(codec, client.capabilities.listing, state, read, ignored, entries)
        continue
      }
      listed = read.items()
    } catch (error) {
      throw listingFailure(codec.kind, error)
    }
    const reported = problems.length
    // Whether the state's own bases are this listing, item for item (see the top of the file).
    let matches = state.digest !== undefined && read.markClean !== undefined
    const dated: string[] = []
    for (const listedObject of listed) {
      const id = listedObject.id
      if (typeof id !== 'string' || id === '') {
        problems.push({
          kind: codec.kind,
          id: String(id),
          problem: 'the server holds an item without an id',
          path: `${FOLDER_OF[codec.kind]}/`,
        })
        continue
      }
      let path: string
      try {
        path = itemPath(codec.kind, id)
      } catch (error) {
        if (!(error instanceof UnsafeIdError)) throw error
        problems.push({ kind: codec.kind, id, problem: error.message, path: `${FOLDER_OF[codec.kind]}/` })
        continue
      }
      // The server may hold two documents with one id (upstream §7.2); the first one listed wins.
      const skipped = entries.has(path) || ignored(path)
      if (skipped && !matches) continue
      // Too deep to compare (or to hash: the revision would overflow the stack).
      if (nestsDeeperThan(listedObject)) {
        matches = false
        if (skipped) continue
        problems.push({
          kind: codec.kind,
          id,
          problem: `${path}: the server's item ${tooDeepMessage()}; not synced`,
          unsynced: path,
        })
        continue
      }
      // Content's revision hashes the item: taken once per listed item.
      const rev = codec.revisionOf(listedObject)
      if (matches) {
        const own = state.get(path)
        matches =
          own?.kind === codec.kind &&
          own.remoteRev === rev &&
          (own.inherited === true) === isInherited(listedObject)
        if (codec.schedules?.(listedObject)) dated.push(id)
      }
      if (skipped) continue
      for (const problem of codec.remoteProblems?.(listedObject) ?? []) {
        problems.push({ kind: codec.kind, id, problem: `${path}: ${problem}`, path })
      }
      const complete = !codec.listIsIncomplete(client.capabilities.listing)
      const known = state.baseAt(path, rev)
      if (known && sameRevision(codec, known, listedObject, rev)) {
        entries.set(path, remoteEntry(codec, listedObject, { id, path, known, complete, rev }))
        continue
      }
      const object = complete ? listedObject : await client.get(codec.kind, id)
      // Gone between the listing and the read: it is deleted now, as a later listing will say.
      if (!object) continue
      if (nestsDeeperThan(object)) {
        problems.push({
          kind: codec.kind,
          id,
          problem: `${path}: the server's item ${tooDeepMessage()}; not synced`,
          unsynced: path,
        })
        continue
      }
      // Inheritance is what the listing said: a read by id may not say it.
      entries.set(path, {
        ...remoteEntry(codec, object, { id, path, known, ...(object === listedObject ? { rev } : {}) }),
        inherited: isInherited(listedObject),
      })
    }
    if (read.kept) await confirmAbsences(client, codec, state, ignored, entries)
    if (matches && problems.length === reported && listed.length === state.items(codec.kind).length)
      matching.push({ read, ...(codec.schedules ? { dated } : {}) })
  }
  const digest = state.digest
  return {
    entries,
    problems,
    ...(matching.length > 0 && digest !== undefined
      ? {
          markListings: async () =>
            void (await Promise.all(matching.map(({ read, dated }) => read.markClean?.(digest, dated)))),
        }
      : {}),
  }
}

/**
 * A kept listing (answered 304) that lacks an item the state has a base of: the server's word
 * that the item is gone rests on its ETag alone, which a proxy or a non-conforming server may
 * never change (the user's own just-pushed item would then be deleted locally). Each such item
 * is read by id: one the server still holds is its remote side; only a 404 makes it gone. A
 * server that keeps its ETags honest never gets here (a delete changes the listing's ETag).
 */
async function confirmAbsences(
  client: RemotePort,
  codec: Codec,
  state: SnapshotState,
  ignored: (path: string) => boolean,
  entries: Map<string, RemoteEntry>,
): Promise<void> {
  for (const known of state.items(codec.kind)) {
    if (entries.has(known.path) || ignored(known.path)) continue
    const object = await client.get(codec.kind, known.id)
    if (!object || nestsDeeperThan(object)) continue
    entries.set(known.path, remoteEntry(codec, object, { id: known.id, path: known.path, known }))
  }
}

/**
 * The remote side of a kind whose kept listing is the state's (see the top of the file): each
 * base as its server item, whose listed copy is parsed only when something reads it.
 */
function keptSide(
  codec: Codec,
  listing: ListingCapabilities,
  state: SnapshotState,
  read: ListingRead,
  ignored: (path: string) => boolean,
  entries: Map<string, RemoteEntry>,
): void {
  let listed: Map<unknown, JsonObject> | undefined
  const objectOf = (id: string): JsonObject => {
    listed ??= new Map(read.items().map((object) => [object.id, object]))
    const object = listed.get(id)
    if (object) return object
    // Only a kept copy edited to keep its sha256 while dropping an item could get here.
    throw new ListingFailedError(
      codec.kind,
      new Error(`the kept listing lacks "${id}"; delete .cms-sync/listings/`),
    )
  }
  const complete = !codec.listIsIncomplete(listing)
  const dated = codec.schedules && read.dated ? new Set(read.dated) : undefined
  for (const known of state.items(codec.kind)) {
    if (ignored(known.path)) continue
    entries.set(known.path, {
      kind: codec.kind,
      id: known.id,
      path: known.path,
      hash: known.baseHash,
      rev: known.remoteRev,
      complete,
      inherited: known.inherited === true,
      ...(dated ? { schedules: dated.has(known.id) } : {}),
      get object() {
        return objectOf(known.id)
      },
    })
  }
}

/** Whether the server's copy is still the one the base recorded (by its revision marker). */
export function sameRevision(
  codec: Codec,
  known: ItemState,
  object: JsonObject,
  rev: string = codec.revisionOf(object),
): boolean {
  return known.remoteRev === rev
}

/**
 * One server item as the plan sees it. Unchanged since the base (same revision marker): the
 * base's hash, so an unchanged item is never hashed again; otherwise its file form's bytes and
 * hash, which need the complete object (`complete: false` only for an unchanged listed one).
 */
export function remoteEntry(
  codec: Codec,
  object: JsonObject,
  opts: { id: string; path: string; known: ItemState | undefined; complete?: boolean; rev?: string },
): RemoteEntry {
  const rev = opts.rev ?? codec.revisionOf(object)
  const unchanged = opts.known !== undefined && sameRevision(codec, opts.known, object, rev)
  // A changed item's file bytes: its hash, and what a pull writes.
  const file = unchanged ? undefined : codec.toFile(object)
  const bytes = file && fileBytes(file)
  const hash = bytes?.hash
  return {
    kind: codec.kind,
    id: opts.id,
    path: opts.path,
    hash: hash ?? opts.known!.baseHash,
    rev,
    object,
    complete: unchanged ? (opts.complete ?? true) : true,
    inherited: isInherited(object),
    ...(bytes ? { bytes } : {}),
  }
}

/** The item's full server form: the listed one when complete, else read by id. */
export async function fullObject(client: RemotePort, entry: RemoteEntry): Promise<JsonObject | undefined> {
  return entry.complete ? entry.object : client.get(entry.kind, entry.id)
}
