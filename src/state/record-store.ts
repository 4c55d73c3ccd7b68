// .cms-sync/state/: the state's records on disk, one ItemState per synced path, stored so that
// one item is read and written without the rest (StateStore in state-file.ts is the only user).
//
// An indexed store: the records are spread by a hash of their path over BUCKETS files, and a
// small index file names the file of each bucket and holds what a run needs of all items without
// reading them (the target, per kind the count and the inherited count: guards.ts BaseCounts,
// and the place for more per-kind facts). Reading one item reads the index and one bucket
// (about 1/256 of the records); a save writes the buckets it changed, each to a file of a new
// name, makes them durable, and then writes the index naming them. The index is the commit: a
// kill -9 before its rename leaves the previous index naming the previous files, all still
// there, so a save is whole or absent, however many buckets it spans (the old single file had
// that property too; a set of files replaced in place would not). Files the index no longer
// names are removed after it is written, and by the next save when a crash left them.
//
// Why not an append-only log that is compacted: a run must know an item's latest record before
// it plans it, and a log tells that only when read whole (or with an index kept beside it, which
// is this store plus a log); its read-all and its compaction cost what the single file did. Its
// one cheap step, the fsynced append, is not what a save waits for: the lock is written too.
// Measured against both (`npx tsx bench/state-store.ts`): docs/benchmarks.md, "The state stored
// in buckets".

import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { naming, writeFileAtomically } from '../util/atomic-write.js'
import { Durability } from '../workspace/durability.js'
import type { Kind } from '../workspace/kinds.js'
import { SYNC_DIR, syncDirPath } from '../workspace/layout.js'
import { refuseLinks } from '../workspace/no-follow.js'
import { tempDirOf } from '../workspace/temp-files.js'
import type { ItemState, Target } from './item-state.js'

export const STATE_DIR = 'state'
const INDEX = 'index.json'
export const STATE_VERSION = 3
/** Buckets of a new store: a bucket of a 100,000-item state holds about 400 records, 150 KB. */
export const BUCKETS = 256

/** Up to this many buckets, a save fsyncs each; more, it flushes them at once (durability.ts). */
const FSYNC_EACH = 4

/** What the index keeps of a kind's items, so that no run reads them all to know it. */
export interface KindRecord {
  count: number
  /** How many of them the server lists from the parent project. */
  inherited: number
}

export interface StateIndex {
  version: typeof STATE_VERSION
  /** First after the version: bound-servers.ts reads the target from the head of the file. */
  target: Target
  buckets: number
  kinds: Partial<Record<Kind, KindRecord>>
  /**
   * An id of the cms-sync.lock the last save wrote, noted with its stat beside the index
   * (state-file.ts lockSeenUnmoved); absent: the lock is not the records' own. Older versions: its sha256.
   */
  lock?: string
  /** The file of each bucket that holds records, by bucket number. */
  files: Record<string, string>
  /**
   * Per listing (a kind's folder name, or `media`): the validator of the listing the bases equal
   * item for item (design.md "Listings are read conditionally"). A 304 to it means the server side
   * of that listing is the bases.
   */
  validators?: Record<string, ListingValidator>
}

/** A listing's validator: its ETag, with the URL it belongs to (another server's never counts). */
export interface ListingValidator {
  url: string
  etag: string
  /** Content: the ids whose listed copy names a schedule (Codec.schedules), said without a body. */
  dated?: string[]
  /**
   * The listing held an item the server shares with its parent project (inherited, or with a
   * copy there): a 304 to it then says nothing of which ids a by-id read may ask for (items.ts).
   */
  parent?: true
}

export function stateDirPath(root: string, ...parts: string[]): string {
  return syncDirPath(root, STATE_DIR, ...parts)
}

export function indexPath(root: string): string {
  return stateDirPath(root, INDEX)
}

/** The bucket of a path: FNV-1a, the same on every machine and every run. */
export function bucketOf(path: string, buckets: number): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < path.length; i++) {
    hash ^= path.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0) % buckets
}

export class StateUnreadableError extends Error {}

function isIndex(value: unknown): value is StateIndex {
  const index = value as StateIndex
  return (
    typeof index === 'object' &&
    index !== null &&
    index.version === STATE_VERSION &&
    typeof index.target === 'object' &&
    index.target !== null &&
    Number.isInteger(index.buckets) &&
    index.buckets > 0 &&
    typeof index.kinds === 'object' &&
    typeof index.files === 'object'
  )
}

/** The index and its bytes, or undefined when there is no store. Synchronous: it is small. */
export function readIndex(root: string): { index: StateIndex; bytes: Buffer } | undefined {
  let bytes: Buffer
  try {
    bytes = readFileSync(indexPath(root))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  let index: unknown
  try {
    index = JSON.parse(bytes.toString('utf8'))
  } catch (error) {
    throw new StateUnreadableError((error as Error).message)
  }
  if (!isIndex(index)) throw new StateUnreadableError('unknown layout')
  return { index, bytes }
}

/**
 * The records of one bucket file (undefined: the file is gone, a newer save replaced it).
 * Synchronous: a bucket is a small part of the state, and a get() of one path asks for it.
 */
export function readBucket(root: string, file: string): ItemState[] | undefined {
  let text: string
  try {
    text = readFileSync(stateDirPath(root, file), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const items = JSON.parse(text) as unknown
    if (!Array.isArray(items)) throw new Error('expected a list of items')
    return items as ItemState[]
  } catch (error) {
    throw new StateUnreadableError(`${STATE_DIR}/${file}: ${(error as Error).message}`)
  }
}

let fileCounter = 0

/** A name no earlier save used: a save never writes over a file a committed index names. */
function freshName(bucket: number): string {
  return `${bucket.toString(16).padStart(2, '0')}-${Date.now().toString(36)}-${process.pid}-${++fileCounter}.json`
}

/**
 * Writes the changed buckets (text: the bucket's records; undefined: it holds none now) and then
 * the index naming them. Returns the index as written. `durability` is flushed, with the
 * buckets in it, before the index is written: the store passes its own, so the files its
 * records vouch for become durable in the same flush.
 */
export async function commitRecords(
  root: string,
  base: StateIndex,
  buckets: ReadonlyMap<number, string | undefined>,
  durability: Durability = new Durability(root),
): Promise<StateIndex> {
  await mkdir(stateDirPath(root), { recursive: true })
  // A write replaces the file a link points at: a .cms-sync (or its state/) made a link while a
  // watch runs (a checkout) must not send the state outside the workspace.
  refuseLinks(root, `${SYNC_DIR}/${STATE_DIR}`)
  const files = { ...base.files }
  const replaced: string[] = []
  // A few buckets (a save of a watch edit, a one-file push) are fsynced each: that costs less
  // than starting `sync -f`, which a save of many (a pull's) pays once instead of an fsync each.
  // When `durability` already holds files to flush (the workspace files a save's records vouch
  // for), its one flush below covers the buckets too.
  const fsyncEach = buckets.size <= FSYNC_EACH && durability.pending === 0
  for (const [bucket, text] of buckets) {
    const was = files[bucket]
    if (was !== undefined) replaced.push(was)
    if (text === undefined) {
      delete files[bucket]
      continue
    }
    const name = freshName(bucket)
    const file = stateDirPath(root, name)
    // Durable before the index names them: fsynced here, or by the one flush below.
    await writeFileAtomically(file, text, { fsync: fsyncEach, tempDir: tempDirOf(root) }).catch((error) => {
      throw naming(error, file)
    })
    if (!fsyncEach) durability.note(file)
    files[bucket] = name
  }
  await durability.flush()
  const index: StateIndex = { ...base, files }
  await writeFileAtomically(indexPath(root), JSON.stringify(index), { tempDir: tempDirOf(root) }).catch(
    (error) => {
      throw naming(error, indexPath(root))
    },
  )
  await Promise.all(replaced.map((name) => rm(stateDirPath(root, name), { force: true })))
  return index
}

/** Removes the files of the state folder the index does not name (a crashed save's). */
export async function removeUnnamed(root: string, index: StateIndex): Promise<void> {
  const named = new Set(Object.values(index.files))
  let names: string[]
  try {
    names = readdirSync(stateDirPath(root))
  } catch {
    return
  }
  const stray = names.filter(
    (name) => name !== INDEX && !named.has(name) && /^[0-9a-f]+-.*\.json$/.test(name),
  )
  await Promise.all(stray.map((name) => rm(stateDirPath(root, name), { force: true })))
}
