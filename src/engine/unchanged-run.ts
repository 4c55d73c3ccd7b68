// A whole-workspace `status` (or a full run of `watch`) that finds nothing changed, told without
// planning every item. When every listing answered 304 to the validator the state recorded (the
// server side is the bases, item for item; media's may also be read in full and name exactly the
// media bases, as a pull leaves it unrecorded; for watch, a JSON listing read in full may too, when
// each item it lists was kept as its own base), every file under the kind folders has its record's stat (so its bytes are the
// base, as the scan's stat cache trusts), no file is new or gone, and nothing is pending beside the
// records (a lock that disagrees, a push a killed run landed, a media upload, a deploy, a conflict
// copy, an inherited item), the plan the full run would make is empty. That comparison is all
// this module does: no plan item, remote entry or local entry is made per unchanged item.
//
// It answers only what it checked the way the full run checks it, and leaves every doubt to the
// full run (plan-and-apply.ts): undefined means "plan", never "changed". Media bytes on a server
// without dates are as unverified here as there (media-verified.ts), and said so.

import { readdir } from 'node:fs/promises'
import type { RemoteMedia } from '../remote/media.js'
import type { ItemState, StateStore } from '../state/state-file.js'
import type { Codec } from '../workspace/codec.js'
import { decodeId, isReservedName } from '../workspace/file-names.js'
import { type IgnoreRules, keepTracked } from '../workspace/ignore-rules.js'
import { FOLDER_OF, isBytes, type Kind } from '../workspace/kinds.js'
import { absolute } from '../workspace/layout.js'
import { plainFileStat, sameStat } from '../workspace/local-file.js'
import { hasConflictCopies } from '../workspace/local-writes.js'
import { mediaPathProblem, readMediaIndex } from '../workspace/media-index.js'
import { kindFolderProblem } from '../workspace/scan.js'
import { strayFilesOf } from '../workspace/stray-files.js'
import { oldestVerifiedFirst, type UnverifiedMedia } from './media/media-verified.js'
import { PendingUploads } from './media/pending-uploads.js'
import type { MediaDeps } from './plan-apply-types.js'
import { BaseAsServerItem, type ListedKind, type Listings } from './remote-snapshot.js'

const MEDIA = FOLDER_OF.media

/** A content item the server names a schedule for, as the schedule of `status` reads it (cli/scheduled.ts). */
export interface DatedEntry {
  kind: Kind
  id: string
  path: string
  hash: string
  complete: true
  schedules: true
  object?: undefined
}

/** What a run that found nothing changed knows: no plan, only what status reports beside one. */
export interface UnchangedRun {
  unchanged: true
  /** Items whose record, file stat and listing agree: every synced item. */
  items: number
  /** Listings that answered 304 to the recorded validator. */
  notModified: number
  /** Listings read in full and found to be the bases item for item (media's, which a pull leaves unrecorded). */
  readInFull: string[]
  /** The JSON listings among them, as the full run would record their validators (recordValidators). */
  listed: Map<Kind, ListedKind>
  /** The content the recorded listing names a schedule for; no other server item is at hand. */
  remote: Map<string, DatedEntry>
  /** No local entry is made: every file is its base. */
  local: Map<string, never>
  /** Media bytes no one compared (the server lists them without a date), oldest verification first. */
  unverified: UnverifiedMedia[]
}

interface Inputs {
  root: string
  codecs: readonly Codec[]
  media: MediaDeps | undefined
  store: StateStore
  rules: IgnoreRules
  listings: Listings
  /** The media listing (undefined: media not synced), and whether it answered 304. */
  mediaListing: Promise<{ media: RemoteMedia[]; unchanged: boolean }> | undefined
  /** The content listing lists an item without fields (upstream's dates): the schedule reads files then. */
  incomplete: (codec: Codec) => boolean
  /**
   * A JSON listing read in full (its validator dropped by a push, or never recorded) counts too
   * when every item it lists is kept as its own base (remote-snapshot.ts standInFor). Not for
   * `status`, whose tests take a run without validators as the full run.
   */
  readInFull?: boolean
}

/**
 * The run's answer when nothing changed on either side, else undefined (the full run decides).
 * Reads every record of the state, one stat per file and the listings' answers; no file content.
 */
export async function unchangedRun(input: Inputs): Promise<UnchangedRun | undefined> {
  const { root, codecs, media, store, rules } = input
  // Anything beside the records that the full run weighs: the lock's other bases, a push a
  // killed run may have landed, media a run chose an id for, an inherited item, media bytes
  // read on request or again for watch.
  if (store.alternates.size > 0 || (store.pushes?.open().length ?? 0) > 0 || store.inheritedCount > 0)
    return undefined
  if (media && (media.checksum || (media.recheck?.size ?? 0) > 0)) return undefined
  // The server side first: one listing that is not a 304 is a plan.
  const dated = new Set<string>()
  const listed = new Map<Kind, ListedKind>()
  const readInFull: string[] = []
  for (const codec of codecs) {
    let read: Awaited<ReturnType<Listings['get']>>
    try {
      read = await input.listings.get(codec.kind)
    } catch {
      // The full run reports the failure as it does (a safety stop, a refused token).
      return undefined
    }
    if (!read) return undefined
    // Where the listing lacks fields, the schedule reads the files (cli/scheduled.ts).
    if (codec.schedules && input.incomplete(codec)) return undefined
    if (read.unchanged) {
      if (codec.schedules) for (const id of read.unchanged.dated ?? []) dated.add(id)
      continue
    }
    if (!input.readInFull) return undefined
    const bases = listingOfBases(codec, store, read)
    if (!bases) return undefined
    if (codec.schedules) for (const id of bases.dated) dated.add(id)
    if (bases.listed) listed.set(codec.kind, bases.listed)
    readInFull.push(FOLDER_OF[codec.kind])
  }
  // Media's listing, when read in full, is compared with the bases below.
  let mediaListed: RemoteMedia[] | undefined
  if (input.mediaListing) {
    try {
      const read = await input.mediaListing
      if (!read.unchanged) mediaListed = read.media
    } catch {
      return undefined
    }
  }
  const kinds = new Set<Kind>(codecs.map((codec) => codec.kind))
  const scheduling = new Set<Kind>(codecs.filter((codec) => codec.schedules).map((codec) => codec.kind))
  const byKind = new Map<Kind, number>()
  const mediaRecords: ItemState[] = []
  // What a 304's bases say of schedules (remote-snapshot.ts basesSide): the recorded listing's ids.
  const remote = new Map<string, DatedEntry>()
  for (const item of store.items()) {
    const synced = isBytes(item.kind) ? media !== undefined : kinds.has(item.kind)
    // A record of a kind not synced, or of a path the rules leave out, the full run sets aside.
    if (!synced || !item.stat || item.deploy !== undefined || item.fromLock || item.inherited)
      return undefined
    if (isBytes(item.kind)) {
      if (!item.media) return undefined
      mediaRecords.push(item)
    } else if (rules.ignores(item.path)) return undefined
    else if (scheduling.has(item.kind) && dated.has(item.id))
      remote.set(item.path, {
        kind: item.kind,
        id: item.id,
        path: item.path,
        hash: item.baseHash,
        complete: true,
        schedules: true,
      })
    byKind.set(item.kind, (byKind.get(item.kind) ?? 0) + 1)
  }
  let files = 0
  for (const codec of codecs) {
    const seen = await jsonFolderUnchanged(root, codec, store, rules)
    if (seen === undefined || seen !== (byKind.get(codec.kind) ?? 0)) return undefined
    files += seen
  }
  if (media) {
    const seen = await mediaUnchanged(root, store, rules, mediaRecords)
    if (seen === undefined) return undefined
    files += seen
  } else if (mediaRecords.length > 0) return undefined
  if (mediaListed && !mediaListingIsBases(mediaListed, mediaRecords)) return undefined
  const unverified = mediaRecords
    .filter((item) => item.remoteRev === '')
    .map((item) => ({ path: item.path, id: item.id, verifiedAt: item.verifiedAt ?? null }))
    .sort(oldestVerifiedFirst)
  return {
    unchanged: true,
    items: files,
    notModified: codecs.length - readInFull.length + (input.mediaListing && !mediaListed ? 1 : 0),
    readInFull: mediaListed ? [...readInFull, MEDIA] : readInFull,
    listed,
    remote,
    local: new Map<string, never>(),
    unverified,
  }
}

/**
 * A JSON listing read in full when every item it lists was kept as its own base (the state's
 * base of its path, at the listed revision: remote-snapshot.ts standInFor), once each, none
 * inherited or with a problem, and no base missing from it: what the full run would record of it
 * (snapshotRemote's ListedKind, when the server sent a validator) and the ids it dates. Else
 * undefined: the full run plans it.
 */
function listingOfBases(
  codec: Codec,
  store: StateStore,
  read: { items(): unknown[]; validator?: ListedKind['validator'] },
): { listed: ListedKind | undefined; dated: string[] } | undefined {
  let items: unknown[]
  try {
    items = read.items()
  } catch {
    return undefined
  }
  if (items.length !== store.countOf(codec.kind)) return undefined
  const seen = new Set<string>()
  const dated: string[] = []
  for (const item of items) {
    if (!(item instanceof BaseAsServerItem) || item.problems || item.inherited || seen.has(item.path))
      return undefined
    if (store.get(item.path)?.kind !== codec.kind) return undefined
    seen.add(item.path)
    if (item.schedules) dated.push(item.id)
  }
  const listed = read.validator && {
    validator: { ...read.validator, ...(codec.schedules ? { dated } : {}) },
    drops: store.dropsOf(FOLDER_OF[codec.kind]),
    items: items as BaseAsServerItem[],
  }
  return { listed, dated }
}

/**
 * Whether a media listing read in full names exactly the media bases: every id once, with the
 * name, folder and revision its base recorded (media-match.ts then finds each unchanged, or
 * unverified where the server gives no date, as the bases' own revisions say).
 */
function mediaListingIsBases(listed: readonly RemoteMedia[], records: readonly ItemState[]): boolean {
  if (listed.length !== records.length) return false
  const byId = new Map(records.map((item) => [item.id, item]))
  for (const media of listed) {
    const base = byId.get(media.id)
    if (
      !base?.media ||
      base.media.name !== media.name ||
      base.media.folder !== media.folder ||
      base.remoteRev !== (media.updateDate ?? '')
    )
      return false
    // Each base once: a second entry of one id is no base's.
    byId.delete(media.id)
  }
  return true
}

/**
 * How many item files a JSON kind's folder holds when each has its record's stat (the scan's
 * stat cache: scan.ts fromStatCache), else undefined: a file the cache cannot vouch for, one
 * without a record, a name no id encodes to, anything that is not a plain file, a stray.
 */
async function jsonFolderUnchanged(
  root: string,
  codec: Codec,
  store: StateStore,
  rules: IgnoreRules,
): Promise<number | undefined> {
  const folder = FOLDER_OF[codec.kind]
  if (kindFolderProblem(root, folder) !== undefined) return undefined
  let entries: import('node:fs').Dirent[]
  try {
    entries = await readdir(absolute(root, folder), { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0
    return undefined
  }
  const ignored = (path: string) => rules.ignores(path)
  const others: { name: string; dir: boolean }[] = []
  let count = 0
  for (const entry of entries) {
    const name = entry.name
    if (!name.endsWith('.json')) {
      others.push({ name, dir: entry.isDirectory() })
      continue
    }
    const path = `${folder}/${name}`
    if (ignored(path)) continue
    const record = store.get(path)
    if (record?.kind !== codec.kind || decodeId(name.slice(0, -'.json'.length)) !== record.id)
      return undefined
    if (!sameStat(record.stat, plainFileStat(root, path))) return undefined
    count++
  }
  // Files no run reads are reported by the full run (status's notSynced).
  if (strayFilesOf(folder, others, ignored).length > 0) return undefined
  return count
}

/**
 * How many media files there are when the media side is its bases: media.yaml names exactly the
 * media records' paths and ids, every file under media/ has its record's stat, none is new or
 * gone, no upload is pending and no conflict copy waits; else undefined.
 */
async function mediaUnchanged(
  root: string,
  store: StateStore,
  rules: IgnoreRules,
  records: readonly ItemState[],
): Promise<number | undefined> {
  if (kindFolderProblem(root, MEDIA) !== undefined) return undefined
  let index: Map<string, string> | undefined
  try {
    index = await readMediaIndex(root)
  } catch {
    return undefined
  }
  if ((index?.size ?? 0) !== records.length) return undefined
  const ids = new Set<string>()
  for (const item of records) {
    const rel = item.path.slice(MEDIA.length + 1)
    if (index?.get(rel) !== item.id || ids.has(item.id)) return undefined
    ids.add(item.id)
  }
  // As the full run does before its walk: a junk-looking name the server has is synced.
  keepTracked(
    root,
    records.map((item) => item.path),
  )
  for (const item of records) if (rules.ignoresByChoice(item.path)) return undefined
  if ((await PendingUploads.load(root)).byPath.size > 0) return undefined
  if (await hasConflictCopies(root, MEDIA)) return undefined
  let count = 0
  const walk = async (rel: string): Promise<boolean> => {
    let entries: import('node:fs').Dirent[]
    try {
      entries = await readdir(absolute(root, rel ? `${MEDIA}/${rel}` : MEDIA), { withFileTypes: true })
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT'
    }
    for (const entry of entries) {
      const child = rel ? `${rel}/${entry.name}` : entry.name
      const path = `${MEDIA}/${child}`
      if (isReservedName(entry.name) || rules.ignores(path)) continue
      if (entry.isDirectory()) {
        if (!(await walk(child))) return false
        continue
      }
      if (!entry.isFile() || mediaPathProblem(child) !== undefined) return false
      const record = store.get(path)
      if (!record?.media || !sameStat(record.stat, plainFileStat(root, path))) return false
      count++
    }
    return true
  }
  if (!(await walk(''))) return undefined
  return count === records.length ? count : undefined
}
