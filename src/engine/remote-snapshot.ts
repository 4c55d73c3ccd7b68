// The remote side of the three-way comparison, from the listing requests alone whenever it can:
// an item whose revision marker equals the base's is unchanged, so its listed copy is never
// re-read. Only changed items whose list form is known to be incomplete (upstream content has
// publishOn null in lists) are fetched by id, because their real dates decide their hash.
//
// A listing asked conditionally needs less still. The state records, per kind, the validator
// (ETag) of the listing its bases equal item for item (a run that ended with them equal recorded
// it: recordValidators). A 304 to it means the server side of the kind is the bases: nothing is
// downloaded, parsed or hashed, and each base stands as its server item. Such a side carries no
// server objects, so a run that finds anything to do (a local change, another kind's server
// change) reads those listings again in full before it plans (plan-and-apply.ts). The tool's own
// writes drop a kind's validator (the client does, before each write), so a server whose ETag
// never changes can hide nobody's change but its own.
//
// A listing read in full is compared item by item as its body arrives (the client reads it so:
// src/remote/array-items.ts): an item whose revision equals its base's is kept only as the base
// standing for it, the same stand-in a 304 gives; only changed and new items are kept whole. So
// the memory of a run follows the change, not the listing. Such stand-ins carry no server object
// either, and a run whose workspace differs from the bases reads those listings again whole
// before it plans (plan-and-apply.ts), as after a 304.

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
import type { ListingRead, RemotePort, Validator } from './remote-port.js'

export interface RemoteEntry extends Version {
  rev: string
  object: JsonObject
  /** False when object came from a list answer that lacks fields (see Codec.listIsIncomplete). */
  complete: boolean
  /** Listed from the parent project the server inherits from (`sync.isRemote`): locked there. */
  inherited: boolean
  /** The file's bytes, when the hash was computed from them (a changed item): a pull reuses them. */
  bytes?: FileBytes
  /** Codec.schedules of the listed copy, when a validator answered 304 says it without a body. */
  schedules?: boolean
}

export interface RemoteSnapshot {
  entries: Map<string, RemoteEntry>
  /** Items the server holds that cannot be mirrored (an id no file name can hold). */
  problems: RemoteProblem[]
  /** Kinds whose listing answered 304 to the recorded validator: their side is the bases. */
  unchanged: Set<Kind>
  /** Kinds read in full whose listing could become the recorded one (see recordValidators). */
  listed: Map<Kind, ListedKind>
  /** Kinds read in full whose unchanged items were kept as their bases (see the top of the file). */
  standIns: Set<Kind>
}

/** A listing read in full, as recordValidators compares it with the bases at the end of a run. */
export interface ListedKind {
  validator: Validator
  /** How many times the validator was dropped when the listing was read (a later write: stale). */
  drops: number
  /** Each listed item: its path, revision and inheritance. */
  items: Array<{ path: string; rev: string; inherited: boolean }>
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
 * that stops early aborts `signal`, so no listing or retry outlives it. `conditional`: asked with
 * the validators the state recorded (not for watch's deep rescan, nor a resolve). `bases`: each
 * item equal to its base there is kept as that base (standInFor); without it every item is kept.
 */
export function requestListings(
  client: RemotePort,
  codecs: readonly Codec[],
  signal: AbortSignal,
  conditional = false,
  bases?: StandInBases,
): Listings {
  return new Map(
    codecs.map((codec) => {
      const take = bases ? standInFor(codec, client, bases) : undefined
      return [codec.kind, settleLater(readListing(client, codec.kind, signal, conditional, take))]
    }),
  )
}

/** A listed item: the server's object, or its base standing for it (unchanged since). */
export type ListedItem = JsonObject | BaseAsServerItem

export type Listings = ReadonlyMap<Kind, Promise<ListingRead<ListedItem>>>

function readListing(
  client: RemotePort,
  kind: Kind,
  signal?: AbortSignal,
  conditional = false,
  take?: (item: JsonObject) => ListedItem,
): Promise<ListingRead<ListedItem>> {
  const opts = { ...(signal ? { signal } : {}), ...(conditional ? { conditional } : {}) }
  if (client.listing) return client.listing<ListedItem>(kind, { ...opts, ...(take ? { take } : {}) })
  return client.list(kind, opts).then((items) => ({ items: () => (take ? items.map(take) : items) }))
}

/** What the stand-ins are read from: the state's own base of a path, and its base for a revision. */
export type StandInBases = Pick<SnapshotState, 'baseAt' | 'get'>

/**
 * What a listing keeps of each of its items as they arrive: the item's own base, when the item
 * has the base's revision (and is the state's own base, not a lock's); else the item whole. What
 * snapshotRemote reads of an unchanged item (its revision, inheritance, schedule, problems) is
 * taken here, while the item is at hand.
 */
function standInFor(
  codec: Codec,
  client: RemotePort,
  bases: StandInBases,
): (object: JsonObject) => ListedItem {
  return (object) => {
    const id = object.id
    if (typeof id !== 'string' || id === '') return object
    let path: string
    try {
      path = itemPath(codec.kind, id)
    } catch {
      return object
    }
    const known = bases.get(path)
    if (!known || nestsDeeperThan(object)) return object
    const rev = codec.revisionOf(object)
    if (known.remoteRev !== rev || bases.baseAt(path, rev) !== known) return object
    const complete = !codec.listIsIncomplete(client.capabilities.listing)
    const standIn = new BaseAsServerItem(codec.kind, known, complete, codec.schedules?.(object), {
      inherited: isInherited(object),
      listed: true,
    })
    const problems = codec.remoteProblems?.(object) ?? []
    if (problems.length > 0) standIn.problems = problems
    return standIn
  }
}

/** What the remote side reads of the state (a StateStore, and the digest of its saved file). */
export interface SnapshotState {
  /** The base of a path; given the listed revision, the base that saw it if one did (StateStore.baseAt). */
  baseAt(path: string, rev: string): ItemState | undefined
  /** The state's own base of a path (never the lock's). */
  get(path: string): ItemState | undefined
  items(kind: Kind): ItemState[]
  /** How many times the kind's validator was dropped (StateStore.dropsOf). */
  dropsOf?(name: string): number
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
  const unchanged = new Set<Kind>()
  const standIns = new Set<Kind>()
  const listedKinds = new Map<Kind, ListedKind>()
  for (const codec of codecs) {
    let read: ListingRead<ListedItem>
    let listed: ListedItem[]
    try {
      read = await (listings?.get(codec.kind) ?? readListing(client, codec.kind))
      if (read.unchanged) {
        basesSide(codec, client.capabilities.listing, state, read.unchanged, ignored, entries)
        unchanged.add(codec.kind)
        continue
      }
      listed = read.items()
    } catch (error) {
      throw listingFailure(codec.kind, error)
    }
    const reported = problems.length
    // What the bases must be at the end of the run for this listing's validator to be recorded.
    const drops = state.dropsOf?.(FOLDER_OF[codec.kind]) ?? 0
    let matches = read.validator !== undefined
    const revs: ListedKind['items'] = []
    const dated: string[] = []
    for (const listedObject of listed) {
      if (listedObject instanceof BaseAsServerItem) {
        // Unchanged since its base: read as such when the listing arrived (standInFor).
        standIns.add(codec.kind)
        const { id, path } = listedObject
        const skipped = entries.has(path) || ignored(path)
        if (skipped && !matches) continue
        if (matches) {
          // Its path, revision and inheritance, as recordValidators reads them: no copy needed.
          revs.push(listedObject)
          if (listedObject.schedules) dated.push(id)
        }
        if (skipped) continue
        for (const problem of listedObject.problems ?? [])
          problems.push({ kind: codec.kind, id, problem: `${path}: ${problem}`, path })
        entries.set(path, listedObject)
        continue
      }
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
        revs.push({ path, rev, inherited: isInherited(listedObject) })
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
    if (matches && read.validator && problems.length === reported)
      listedKinds.set(codec.kind, {
        validator: { ...read.validator, ...(codec.schedules ? { dated } : {}) },
        drops,
        items: revs,
      })
  }
  return { entries, problems, unchanged, listed: listedKinds, standIns }
}

/** The state's side of a kind, as recordValidators and the by-kind count read it. */
export interface BasesOfKind {
  get(path: string): ItemState | undefined
  items(kind: Kind): ItemState[]
  dropsOf(name: string): number
}

/**
 * Whether the state's bases of a kind are the listing, item for item (same paths, revisions,
 * inheritance), and no write of the tool's came after it was read.
 */
export function basesEqual(state: BasesOfKind, kind: Kind, listed: ListedKind): boolean {
  if (state.dropsOf(FOLDER_OF[kind]) !== listed.drops) return false
  if (state.items(kind).length !== listed.items.length) return false
  for (const { path, rev, inherited } of listed.items) {
    const own = state.get(path)
    if (own?.kind !== kind || own.remoteRev !== rev || (own.inherited === true) !== inherited) return false
  }
  return true
}

/**
 * The remote side of a kind whose listing answered 304 to the recorded validator (see the top
 * of the file): each base as its server item. No server object came with it: a run that needs
 * one reads the listing in full first (plan-and-apply.ts), so reaching one here is a bug.
 */
function basesSide(
  codec: Codec,
  listing: ListingCapabilities,
  state: SnapshotState,
  validator: Validator,
  ignored: (path: string) => boolean,
  entries: Map<string, RemoteEntry>,
): void {
  const complete = !codec.listIsIncomplete(listing)
  const dated = codec.schedules ? new Set(validator.dated ?? []) : undefined
  for (const known of state.items(codec.kind)) {
    if (ignored(known.path)) continue
    entries.set(known.path, new BaseAsServerItem(codec.kind, known, complete, dated?.has(known.id)))
  }
}

/**
 * A base standing for its server item: under a 304, or for a listed item whose revision is the
 * base's (standInFor). A class, not an object literal with a getter: such a literal is a
 * dictionary-mode object with its own closure, some 500 bytes each, about 55 MB of a no-change
 * status at 100,000 items (heap snapshot); these share one shape.
 */
export class BaseAsServerItem implements RemoteEntry {
  readonly id: string
  readonly path: string
  readonly hash: string
  readonly rev: string
  readonly inherited: boolean
  readonly schedules?: boolean
  /** What the listed item's codec found wrong with it (Codec.remoteProblems); none under a 304. */
  problems?: string[]
  private readonly listed: boolean
  constructor(
    readonly kind: Kind,
    known: ItemState,
    readonly complete: boolean,
    schedules: boolean | undefined,
    /** A listed item's own inheritance (else the base's), and that it was listed. */
    from: { inherited: boolean; listed: true } | undefined = undefined,
  ) {
    this.id = known.id
    this.path = known.path
    this.hash = known.baseHash
    this.rev = known.remoteRev
    this.inherited = from ? from.inherited : known.inherited === true
    this.listed = from !== undefined
    if (schedules !== undefined) this.schedules = schedules
  }

  get object(): JsonObject {
    const what = this.listed
      ? `"${this.id}" was listed unchanged, so no server copy of it was kept, and one was read`
      : `the listing answered 304 and "${this.id}" was read from it`
    throw new ListingFailedError(this.kind, new Error(`${what}; this is a bug in cms-sync`))
  }
}

/** Whether the entry carries its server object (a base standing for it does not). */
export function hasServerObject(entry: RemoteEntry): boolean {
  return !(entry instanceof BaseAsServerItem)
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
  return entry.complete && hasServerObject(entry) ? entry.object : client.get(entry.kind, entry.id)
}
