// .cms-sync/state/: the base of the three-way comparison. Per item it holds the hash of the
// canonical file at the last successful sync, the server's revision marker seen then, and a stat
// cache so an unchanged file is never re-read. Stored so that one item is read and written
// without the rest (record-store.ts says how, and why not a log). Written atomically and only
// after the server confirmed, so it never claims a write the server did not get.

import { createHash, randomUUID } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { CliError } from '../errors/exit-codes.js'
import { type StatSnapshot, writeFileAtomically } from '../util/atomic-write.js'
import { Durability } from '../workspace/durability.js'
import { isBytes, type Kind } from '../workspace/kinds.js'
import { syncDirPath } from '../workspace/layout.js'
import { tempDirOf } from '../workspace/temp-files.js'
import {
  byPath,
  lineOf,
  lockFilePath,
  lockTextOfLines,
  patchLock,
  readLockSync,
  writeLock,
} from './committed-base.js'
import type { ItemState, Target } from './item-state.js'
import { FileBytes, type LockChange, type LockPatch, lockPatches, spliceLock } from './lock-splice.js'
import type { PushJournal } from './push-journal.js'
import {
  BUCKETS,
  bucketOf,
  commitRecords,
  indexPath,
  type KindRecord,
  type ListingValidator,
  readBucket,
  readIndex,
  removeUnnamed,
  STATE_DIR,
  STATE_VERSION,
  type StateIndex,
  StateUnreadableError,
  stateDirPath,
} from './record-store.js'

// The item's shape has its own module (the lock and the push journal hold it too); the state's
// readers keep asking this one.
export type { ItemState, MediaBase, StatSnapshot, Target } from './item-state.js'
export type { ListingValidator } from './record-store.js'

/**
 * The createDate to record for a content item the server now holds as `object` (a write never
 * resets it: ItemState.createDate); kinds without one record none, unless the state knew one.
 */
export function createDateOf(
  object: Record<string, unknown>,
  known: ItemState | undefined,
): Pick<ItemState, 'createDate'> {
  if ('createDate' in object)
    return { createDate: typeof object.createDate === 'string' ? object.createDate : null }
  return known && 'createDate' in known ? { createDate: known.createDate ?? null } : {}
}

/** A whole state held in memory: what loadState reads, and what a new StateStore starts from. */
export interface StateFile {
  version: 2
  target: Target
  items: Record<string, ItemState>
}

/** The file that records the state: its index (record-store.ts), which names the rest. */
export function statePath(root: string): string {
  return indexPath(root)
}

/** The single file an earlier version kept the whole state in, converted by the first save. */
export function legacyStatePath(root: string): string {
  return syncDirPath(root, 'state.json')
}

function unreadable(root: string, error: unknown): CliError {
  return new CliError(
    `${stateDirPath(root)} is unreadable (${(error as Error).message}); move it away to start over as a fresh clone`,
  )
}

/**
 * The state a version before this one kept in .cms-sync/state.json. Version 2 is the state as it
 * is now, read whole once and converted by the next save. Version 1 recorded its bases of files
 * with sorted keys, which nothing compares any more: it is read as absent, and the committed lock
 * gives every item whose two sides still agree its base again.
 */
async function loadLegacyState(root: string): Promise<StateFile | undefined> {
  let bytes: Buffer
  try {
    bytes = await readFile(legacyStatePath(root))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const state = JSON.parse(bytes.toString('utf8')) as StateFile | { version: 1 }
    if (state.version === 1) return undefined
    if (state.version !== 2 || typeof state.items !== 'object' || !state.target)
      throw new Error('unknown layout')
    return state
  } catch (error) {
    throw new CliError(
      `${legacyStatePath(root)} is unreadable (${(error as Error).message}); move it away to start over as a fresh clone`,
    )
  }
}

/** The whole state, every item read (doctor, tests); undefined in a fresh clone. */
export async function loadState(root: string): Promise<StateFile | undefined> {
  const store = await StateStore.open(root)
  if (!store) return undefined
  const items: Record<string, ItemState> = {}
  for (const item of store.items()) items[item.path] = item
  return { version: 2, target: store.target, items }
}

/** How many items the state holds, read from its index alone (0 without a state). */
export async function trackedCount(root: string): Promise<number> {
  return (await StateStore.open(root))?.size ?? 0
}

export function emptyState(target: Target): StateFile {
  return { version: 2, target, items: {} }
}

/** One server however its address ends: `https://cms.example/` is `https://cms.example`. */
export function sameServer(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '')
}

export function sameTarget(a: Target, b: Target): boolean {
  return sameServer(a.server, b.server) && a.project === b.project && a.environment === b.environment
}

/** The lock's stat when the last save wrote it: a run knows the lock is its own without reading it. */
const LOCK_SEEN = 'lock-seen.json'

interface LockSeen {
  /** The id of the lock the save wrote, as the index records it (older versions: `sha256`, its digest). */
  id?: string
  sha256?: string
  size: number
  mtimeMs: number
  ino: number
}

/**
 * An id for the lock a save writes, recorded in the index and beside the lock's stat. Not a digest
 * of the text: a save that patches the lock in place never holds the text to hash (lock-splice.ts).
 */
const newLockId = () => randomUUID()

/**
 * cms-sync.lock's stat when it is, by that stat, the file the save that the index records as
 * `indexLock` wrote (then its text is the one the state's records make, target line included).
 */
function lockSeenStat(root: string, indexLock: string | undefined): StatSnapshot | undefined {
  if (indexLock === undefined) return undefined
  let seen: LockSeen
  try {
    seen = JSON.parse(readFileSync(stateDirPath(root, LOCK_SEEN), 'utf8')) as LockSeen
  } catch {
    return undefined
  }
  const stat = statSync(lockFilePath(root), { throwIfNoEntry: false })
  const same =
    (seen.id ?? seen.sha256) === indexLock &&
    stat !== undefined &&
    stat.size === seen.size &&
    stat.mtimeMs === seen.mtimeMs &&
    stat.ino === seen.ino
  return same ? { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino } : undefined
}

/** Whether cms-sync.lock is, by its stat, the file the save the index records as `indexLock` wrote. */
export function lockSeenUnmoved(root: string, indexLock: string | undefined): boolean {
  return lockSeenStat(root, indexLock) !== undefined
}

const sameStat = (a: StatSnapshot | undefined, b: StatSnapshot | undefined) =>
  a !== undefined && b !== undefined && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino

/** What a save writes to cms-sync.lock: the changed lines where they stand, or the whole text. */
type LockWrite = { patches: LockPatch[]; expect: StatSnapshot } | { bytes: Buffer }

/**
 * The state of a run: its records are read bucket by bucket as items are asked for (get() of one
 * path reads one bucket, items() all of them: record-store.ts), kept in memory, and saved in
 * small batches. Only items the server already confirmed are ever committed, so a crash loses
 * at most the record of a few confirmed changes; the next run then finds both sides equal and
 * adopts them (merge-base). A save writes the buckets that changed and the index (whole or not
 * at all), then splices the changed lines into cms-sync.lock (lock-splice.ts); saves are spaced
 * by ten times what the last one took, so on a large pull they stay under a tenth of the run.
 */
export class StateStore {
  private unsaved = 0
  private lastSaveMs = 0
  private lastSaveCostMs = 0
  private saving: Promise<void> | undefined
  /**
   * What the runs against this state wrote to the workspace (their LocalWriters note it here).
   * Flushed before every save, after the text is taken, so the state never claims a file the
   * disk might lose. One per store: watch keeps its store from run to run, so a save flushes
   * what every earlier run wrote too.
   */
  readonly durability: Durability
  /**
   * Items whose base in cms-sync.lock differs from the state's (null: the lock has no base for
   * it). The planner plans against both (plan.ts, `alt`); until the item is synced again the lock
   * keeps its own line, so an open disagreement is never settled by the rewrite of the lock.
   */
  readonly alternates = new Map<string, ItemState | null>()
  /** What runs are about to push (push-journal.ts); set by whoever opens the state for a run. */
  pushes: PushJournal | undefined
  readonly target: Target
  /** The index as last read or saved: the bucket files it names are the records on disk. */
  private index: StateIndex
  /** Per kind, the count and inherited count of the items in memory (the index's, kept up to date). */
  private readonly kinds = new Map<Kind, KindRecord>()
  /** The buckets read so far (or made), by number. */
  private readonly buckets = new Map<number, Map<string, ItemState>>()
  /**
   * Every record of the buckets read, by path: a run asks for each item several times (the scan,
   * the plan, the media side), about a million gets at 100,000 items, and hashing the path to its
   * bucket each time took 0.47 s of a no-change status (CPU profile).
   */
  private readonly loaded = new Map<string, ItemState>()
  /** Every bucket has been read: a path not in `loaded` is in none. */
  private allLoaded = false
  /** Buckets changed since the last save, and the paths whose lock line may have. */
  private dirty = new Set<number>()
  private changedPaths = new Set<string>()
  /** The sha256 of the index read, while the state in memory is still that one. */
  private digest: string | undefined
  /**
   * The lock on disk is the text this store's records make (the last save wrote it), so a save
   * puts its changed lines in; otherwise (git moved it, or there is none) a save makes it whole.
   */
  private lockIsOurs = false
  /** The lock's stat while it is ours: a lock with another (git wrote it since) is not. */
  private lockStat: StatSnapshot | undefined
  /** The lock's bytes on disk, while a save needs them (a splice, a comparison); not kept after it. */
  private lockOnDisk: Buffer | undefined
  /** The stat of the file `lockOnDisk` was read from. */
  private lockOnDiskStat: StatSnapshot | undefined
  /** lock-seen.json holds the lock's stat as it is (read or written by this store). */
  private lockSeen = false
  /** The first save also removes what older saves or versions left (record-store.ts removeUnnamed). */
  private tidied = false
  /** The listings' validators, saved in the index (record-store.ts StateIndex.validators). */
  private validators: Record<string, ListingValidator> = {}
  /** How many times each listing's validator was dropped by this process. */
  private readonly drops = new Map<string, number>()

  /**
   * A store holding `state`'s items, none of them on disk yet (the next save writes them all);
   * StateStore.open reads a saved one.
   */
  constructor(
    readonly root: string,
    state: StateFile | { index: StateIndex; bytes: Buffer },
    // Each save writes (and flushes) the buckets it changed: at most about once a second, or
    // every 250 items, keeps a 2,000-file media pull from spending its time saving; a crash
    // loses at most that many records, which the next run adopts again by comparing both sides.
    private readonly batch = { items: 250, ms: 1000 },
  ) {
    this.durability = new Durability(root)
    if ('index' in state) {
      this.index = state.index
      this.target = state.index.target
      this.digest = createHash('sha256').update(state.bytes).digest('hex')
      this.validators = { ...state.index.validators }
      for (const [kind, record] of Object.entries(state.index.kinds))
        this.kinds.set(kind as Kind, { ...(record as KindRecord) })
      return
    }
    this.target = state.target
    this.index = { version: STATE_VERSION, target: state.target, buckets: BUCKETS, kinds: {}, files: {} }
    for (const item of Object.values(state.items)) this.replace(item.path, item)
  }

  /** The saved state (index only; records are read as they are asked for), or undefined without one. */
  static async open(root: string, batch?: { items: number; ms: number }): Promise<StateStore | undefined> {
    let opened: ReturnType<typeof readIndex>
    try {
      opened = readIndex(root)
    } catch (error) {
      if (error instanceof StateUnreadableError) throw unreadable(root, error)
      throw error
    }
    if (opened) return new StateStore(root, opened, batch)
    const legacy = await loadLegacyState(root)
    if (!legacy) return undefined
    const store = new StateStore(root, legacy, batch)
    // Converted by the first save of a run that saves (status saves nothing, and reads it again).
    store.unsaved++
    return store
  }

  /** The digest of the saved state this one is, or undefined once it changed in memory. */
  get savedDigest(): string | undefined {
    return this.digest
  }

  private bucketNumber(path: string): number {
    return bucketOf(path, this.index.buckets)
  }

  /** A bucket's records, read on first use. */
  private bucket(number: number): Map<string, ItemState> {
    const known = this.buckets.get(number)
    if (known) return known
    const records = new Map<string, ItemState>()
    const file = this.index.files[number]
    if (file !== undefined)
      for (const item of this.readRecords(number, file)) {
        records.set(item.path, item)
        this.loaded.set(item.path, item)
      }
    this.buckets.set(number, records)
    return records
  }

  private readRecords(number: number, file: string): ItemState[] {
    try {
      const items = readBucket(this.root, file)
      if (items) return items
      // A save of another process (watch, while status reads) replaced the file since the index
      // was read: the newer index names the newer one.
      const newer = readIndex(this.root)?.index.files[number]
      const again = newer === undefined || newer === file ? undefined : readBucket(this.root, newer)
      if (newer === undefined) return []
      if (again) return again
      throw new StateUnreadableError(`${STATE_DIR}/${file} is missing`)
    } catch (error) {
      if (error instanceof StateUnreadableError) throw unreadable(this.root, error)
      throw error
    }
  }

  /** Puts `item` in the place of what its path held (nothing: undefined), in the records and the counts. */
  private replace(path: string, item: ItemState | undefined): void {
    this.digest = undefined
    const number = this.bucketNumber(path)
    const records = this.bucket(number)
    const known = records.get(path)
    if (known) this.counted(known, -1)
    if (item) {
      records.set(path, item)
      this.loaded.set(path, item)
      this.counted(item, 1)
    } else {
      records.delete(path)
      this.loaded.delete(path)
    }
    if (known || item) {
      this.dirty.add(number)
      this.changedPaths.add(path)
    }
    this.alternates.delete(path)
  }

  private counted(item: ItemState, by: 1 | -1): void {
    const record = this.kinds.get(item.kind) ?? { count: 0, inherited: 0 }
    record.count += by
    if (item.inherited) record.inherited += by
    this.kinds.set(item.kind, record)
  }

  get(path: string): ItemState | undefined {
    const item = this.loaded.get(path)
    if (item !== undefined || this.allLoaded) return item
    return this.bucket(this.bucketNumber(path)).get(path)
  }

  /** How many records are held in memory: read since the last release, or changed and not saved. */
  get inMemory(): number {
    // `loaded` holds every record of the buckets read, no more: the two are kept together.
    return this.loaded.size
  }

  /**
   * Lets go of the records a save holds on disk (each bucket with no unsaved change); they are
   * read again when asked for. For a holder that lives long (watch, between its runs): its memory
   * then follows what changed, not the size of the workspace. Nothing while a save is under way:
   * until it ends, the index names the files it replaces.
   */
  release(): void {
    if (this.saving) return
    for (const [number, records] of [...this.buckets]) {
      if (this.dirty.has(number)) continue
      this.buckets.delete(number)
      for (const path of records.keys()) this.loaded.delete(path)
    }
    this.allLoaded = false
  }

  /** The validator of the listing `name`'s bases equal, if one is recorded. */
  validatorOf(name: string): ListingValidator | undefined {
    const validator = this.validators[name]
    return validator && typeof validator.url === 'string' && typeof validator.etag === 'string'
      ? validator
      : undefined
  }

  /** How many times `name`'s validator was dropped: a listing read before a drop is not recorded. */
  dropsOf(name: string): number {
    return this.drops.get(name) ?? 0
  }

  /** Records that the bases of `name` equal the listing `validator` names; saved with the next save. */
  setValidator(name: string, validator: ListingValidator): void {
    const known = this.validators[name]
    if (
      known?.url === validator.url &&
      known.etag === validator.etag &&
      known.parent === validator.parent &&
      JSON.stringify(known.dated ?? []) === JSON.stringify(validator.dated ?? [])
    )
      return
    this.validators = { ...this.validators, [name]: validator }
    this.unsaved++
  }

  /**
   * Before the tool's own write to `name`: a server or proxy whose ETag does not follow the
   * listing would answer 304 to the old validator for ever, and the write would look undone.
   */
  dropValidator(name: string): void {
    this.drops.set(name, this.dropsOf(name) + 1)
    if (!this.validators[name]) return
    const { [name]: _dropped, ...rest } = this.validators
    this.validators = rest
    this.unsaved++
  }

  /** Every validator goes: the bases changed under them (a lock that adds or disagrees). */
  dropValidators(): void {
    if (Object.keys(this.validators).length === 0) return
    this.validators = {}
    this.unsaved++
  }

  /**
   * The base whose server revision marker is `rev`: the state's, or the lock's where the two
   * disagree; else the state's. A remote item at a revision either base saw is unchanged since it.
   */
  baseAt(path: string, rev: string): ItemState | undefined {
    const known = this.get(path)
    if (known?.remoteRev === rev) return known
    const alternate = this.alternates.get(path)
    return alternate?.remoteRev === rev ? alternate : known
  }

  /** Every item (of one kind, if given): reads every bucket. */
  items(kind?: Kind): ItemState[] {
    for (const number of Object.keys(this.index.files)) this.bucket(Number(number))
    this.allLoaded = true
    const items: ItemState[] = []
    for (const records of this.buckets.values())
      for (const item of records.values()) if (kind === undefined || item.kind === kind) items.push(item)
    return items
  }

  /** How many items of a kind the state holds (guards.ts BaseCounts). */
  countOf(kind: Kind): number {
    return this.kinds.get(kind)?.count ?? 0
  }

  /** How many items the server listed as inherited from its parent project. */
  get inheritedCount(): number {
    let count = 0
    for (const record of this.kinds.values()) count += record.inherited
    return count
  }

  isInherited(path: string): boolean {
    return this.get(path)?.inherited === true
  }

  get size(): number {
    let count = 0
    for (const record of this.kinds.values()) count += record.count
    return count
  }

  async commit(item: ItemState): Promise<void> {
    this.replace(item.path, item)
    await this.changed()
  }

  /**
   * A base the plan learned (a landed push, landed-pushes.ts): in memory at once, on disk with
   * the next save of a run that writes. Never saved here: `status` plans too, without the lock.
   */
  adopt(item: ItemState): void {
    this.replace(item.path, item)
    this.unsaved++
  }

  /**
   * A base cms-sync.lock holds for an item the state lacks (openState): in memory, and on disk
   * with the next save, if a run saves; a run that changes nothing leaves the state as it was.
   */
  join(item: ItemState): void {
    this.replace(item.path, item)
  }

  /**
   * The server's bytes of a media item were read and are its base: when, for status. In memory at
   * once, on disk with the next save (the daemon's verifier, a --checksum run); never saved here.
   */
  verified(path: string, at: string): void {
    const item = this.get(path)
    if (!item || !isBytes(item.kind)) return
    this.replace(path, { ...item, verifiedAt: at })
    this.unsaved++
  }

  async forget(path: string): Promise<void> {
    this.replace(path, undefined)
    await this.changed()
  }

  /**
   * The item the lock records for a path: the state's, but the lock's own line while the two
   * disagree (null: the lock has no line for it).
   */
  private lockItemAt(path: string): ItemState | null | undefined {
    const alternate = this.alternates.get(path)
    return alternate === undefined ? this.get(path) : alternate
  }

  /** cms-sync.lock as the state stands, made from every item (the lock's lines: the state's, or the alternates'). */
  lockText(): string {
    const lines: { path: string; line: string }[] = []
    for (const known of this.items()) {
      const item = this.lockItemAt(known.path)
      if (item) lines.push({ path: known.path, line: lineOf(item) })
    }
    lines.sort((a, b) => byPath(a.path, b.path))
    return lockTextOfLines(
      this.target,
      lines.map((entry) => entry.line),
    )
  }

  /**
   * Whether cms-sync.lock is, by its stat, the file the last save wrote (then it is not read).
   * Synchronous: two small calls on the way of every run.
   */
  lockUnmoved(): boolean {
    const stat = lockSeenStat(this.root, this.index.lock)
    if (stat) {
      this.lockIsOurs = true
      this.lockSeen = true
      this.lockStat = stat
    }
    return stat !== undefined
  }

  /**
   * Whether `text`, cms-sync.lock as read, is the lock these records make: compared with the lock
   * made whole. Only where the stat did not say so (git wrote the same text again, a state
   * converted from state.json, a kill before the lock's stat was noted), so rarely.
   */
  recognizeLock(text: string, readFrom: StatSnapshot): boolean {
    if (text !== this.lockText()) return false
    // Only while the lock there is still the file the text came from: git may have written
    // another in its place while the records' text was made, and that one is not ours.
    const now = statSync(lockFilePath(this.root), { throwIfNoEntry: false })
    if (!sameStat(readFrom, now && { size: now.size, mtimeMs: now.mtimeMs, ino: now.ino })) return false
    this.lockIsOurs = true
    this.lockStat = readFrom
    return true
  }

  private async changed(): Promise<void> {
    this.unsaved++
    // Items committed during a save are left for the next one.
    if (this.saving) return
    const sinceLast = Date.now() - this.lastSaveMs
    const due = this.unsaved >= this.batch.items || sinceLast >= this.batch.ms
    if (due && sinceLast >= 10 * this.lastSaveCostMs) await this.save()
  }

  /** Saves what is not saved yet; call at the end of every run, whatever happened. */
  async flush(): Promise<void> {
    while (this.saving) await this.saving
    if (this.unsaved > 0) await this.save()
  }

  /**
   * What the save writes to the lock, taken with the records: the changed lines written where
   * they stand (same lengths: the lock is not even read, lock-splice.ts), spliced into the lock
   * this store wrote, or the whole lock made again. Undefined: no line changed.
   */
  private nextLock(paths: ReadonlySet<string>): LockWrite | undefined {
    if (this.lockIsOurs) {
      const stat = statSync(lockFilePath(this.root), { throwIfNoEntry: false })
      // Written since by someone else (git): no longer the text the records make.
      if (!sameStat(this.lockStat, stat && { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino }))
        this.lockIsOurs = false
    }
    if (this.lockIsOurs) {
      if (paths.size === 0) return undefined
      const changes: LockChange[] = [...paths].map((path) => {
        const item = this.lockItemAt(path)
        return { path, line: item ? lineOf(item) : undefined }
      })
      const file = FileBytes.open(lockFilePath(this.root))
      if (file !== undefined) {
        try {
          if (sameStat(this.lockStat, file.stat)) {
            const patches = lockPatches(file, changes)
            if (patches !== undefined) return patches.length > 0 ? { patches, expect: file.stat } : undefined
          }
        } finally {
          file.close()
        }
      }
      const read = readLockSync(this.root)
      if (read !== undefined && sameStat(this.lockStat, read.stat)) {
        const spliced = spliceLock(read.bytes, changes)
        return spliced && { bytes: spliced }
      }
      this.lockIsOurs = false
    }
    const whole = Buffer.from(this.lockText())
    const onDisk = readLockSync(this.root)
    this.lockOnDisk = onDisk?.bytes
    this.lockOnDiskStat = onDisk?.stat
    return this.lockOnDisk?.equals(whole) ? undefined : { bytes: whole }
  }

  /**
   * Saves run one after another, each taking the records as they are when it starts, so commits
   * made concurrently (transfers run side by side) are never overwritten by an older snapshot
   * finishing last. A waiter re-checks `saving` synchronously before it starts.
   */
  async save(): Promise<void> {
    while (this.saving) await this.saving
    const started = Date.now()
    // The records, the lock's text and the count they cover are taken together, before any
    // other commit can run. Plain JSON: these files are ours alone, never diffed.
    const dirty = this.dirty
    const paths = this.changedPaths
    this.dirty = new Set()
    this.changedPaths = new Set()
    const buckets = new Map<number, string | undefined>()
    for (const number of dirty) {
      const records = this.buckets.get(number)
      buckets.set(number, records?.size ? JSON.stringify([...records.values()]) : undefined)
    }
    let lock: LockWrite | undefined
    try {
      lock = this.nextLock(paths)
    } catch (error) {
      this.unsave(dirty, paths)
      throw error
    }
    const wasOurs = this.lockIsOurs
    // While the lock keeps its own line for an item the state disagrees with (alternates), its
    // text is not the one the state's records make: it must never pass as the store's own, or the
    // next run would skip reading it and plan against the state alone (an older checkout's line
    // would stop being a conflict and the state's base would push the old file back).
    const own = this.alternates.size === 0
    // The id of the lock as it will be: a lock made whole and found equal is the store's too.
    const lockId = !own
      ? undefined
      : lock === undefined && wasOurs && this.index.lock !== undefined
        ? this.index.lock
        : newLockId()
    const kinds: StateIndex['kinds'] = {}
    for (const [kind, record] of this.kinds) if (record.count > 0) kinds[kind] = { ...record }
    const { validators: _saved, lock: _lock, ...index } = this.index
    const validators = Object.keys(this.validators).length > 0 ? { validators: this.validators } : {}
    const next: StateIndex = {
      ...index,
      kinds,
      ...(lockId === undefined ? {} : { lock: lockId }),
      ...validators,
    }
    const covered = this.unsaved
    const needless = this.pushes?.needlessWith((path) => this.get(path)) ?? []
    const indexChanged =
      buckets.size > 0 ||
      next.lock !== this.index.lock ||
      JSON.stringify(kinds) !== JSON.stringify(this.index.kinds) ||
      JSON.stringify(next.validators) !== JSON.stringify(this.index.validators)
    const tidy = !this.tidied && indexChanged
    this.saving = (async () => {
      if (indexChanged) {
        // The workspace files the records vouch for and the bucket files holding them are made
        // durable by one flush, after the buckets are written and before the index names them
        // (record-store.ts): a bucket no index names yet is no state, so it may come first.
        this.index = await commitRecords(this.root, next, buckets, this.durability)
        this.digest = undefined
      } else await this.durability.flush()
      if (tidy) {
        await removeUnnamed(this.root, this.index)
        // The whole state an earlier version kept, converted now.
        await rm(legacyStatePath(this.root), { force: true })
        this.tidied = true
      }
      // The lock after the state: a crash between the two leaves the lock one step behind,
      // which the next run sees as a disagreement (a conflict at worst), never as a base it lacks.
      if (lock !== undefined) {
        const stat =
          'patches' in lock
            ? await patchLock(this.root, lock.patches, lock.expect)
            : await writeLock(this.root, lock.bytes)
        this.lockOnDisk = undefined
        this.lockOnDiskStat = undefined
        // undefined: git wrote the lock while the lines were found; the next save makes it whole.
        this.lockIsOurs = own && stat !== undefined
        this.lockStat = stat
        if (lockId !== undefined && stat !== undefined) await this.noteLockSeen(lockId, stat)
      } else if (own && (this.lockIsOurs || this.lockOnDisk !== undefined)) {
        // Not written: the lock is the records' own, or was found equal to them just now.
        let stat = this.lockStat
        if (!this.lockIsOurs) {
          // Still the file found equal: git may have put another in its place since.
          const found = statSync(lockFilePath(this.root), { throwIfNoEntry: false })
          const now = found && { size: found.size, mtimeMs: found.mtimeMs, ino: found.ino }
          stat = sameStat(this.lockOnDiskStat, now) ? now : undefined
        }
        this.lockIsOurs = true
        this.lockStat = stat
        this.lockOnDisk = undefined
        this.lockOnDiskStat = undefined
        // Known by its text this time (a converted state, a lock git put back): by its stat next time.
        if (indexChanged && !this.lockSeen && stat !== undefined && lockId !== undefined)
          await this.noteLockSeen(lockId, stat)
      }
      // Pushes the saved state now holds need no journal entry.
      await this.pushes?.drop(needless)
    })()
    try {
      await this.saving
    } catch (error) {
      this.unsave(dirty, paths)
      throw error
    } finally {
      this.saving = undefined
    }
    this.unsaved -= covered
    this.lastSaveMs = Date.now()
    this.lastSaveCostMs = this.lastSaveMs - started
  }

  /** Notes the lock's stat beside the index, for lockUnmoved(). */
  private async noteLockSeen(id: string, stat: StatSnapshot): Promise<void> {
    const seen: LockSeen = { id, size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino }
    // Without an fsync: lost, the next run reads the lock once more to know it.
    await writeFileAtomically(stateDirPath(this.root, LOCK_SEEN), JSON.stringify(seen), {
      fsync: false,
      tempDir: tempDirOf(this.root),
    })
    this.lockSeen = true
  }

  /** A save that failed: what it was to write is to be written by the next. */
  private unsave(dirty: ReadonlySet<number>, paths: ReadonlySet<string>): void {
    for (const number of dirty) this.dirty.add(number)
    for (const path of paths) this.changedPaths.add(path)
  }
}
