// Reads the three sides of media for one run: the base (state), media.yaml and the files, the
// server's listing, and, only where the listing cannot tell whether the bytes changed, the
// bytes themselves (streamed into .cms-sync/tmp/ with their hash taken on the way; a pull in
// the same run moves that file into place instead of downloading again).

import { createHash } from 'node:crypto'
import { access, mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { MediaApi, RemoteMedia } from '../../remote/media.js'
import type { StateStore } from '../../state/state-file.js'
import { inParallel } from '../../util/in-parallel.js'
import { printable } from '../../util/printable.js'
import { syncDirPath } from '../../workspace/layout.js'
import { conflictCopyPath, hasConflictCopies } from '../../workspace/local-writes.js'
import { MediaIndexError, readMediaIndex } from '../../workspace/media-index.js'
import { scanMedia, scanMediaFileAt } from '../../workspace/media-scan.js'
import { heldBy, type ScanProblem, unsyncedPaths } from '../../workspace/scan.js'
import type { PlanItem, PlanOptions } from '../plan.js'
import {
  idsMovedOntoAnotherFile,
  localRelOf,
  type MediaBaseItem,
  type MediaMatch,
  type MovedOntoAnotherFile,
  matchMedia,
  unsafeMedia,
} from './media-match.js'
import { MEDIA_FOLDER, mediaPath, planMedia } from './media-plan.js'
import { PendingUploads } from './pending-uploads.js'

export interface Downloaded {
  file: string
  sha256: string
  size: number
}

export interface MediaRun {
  api: MediaApi
  items: PlanItem[]
  match: MediaMatch
  base: Map<string, MediaBaseItem>
  /** media.yaml as it was read (undefined: none), and the working copy the run updates. */
  indexBefore: Map<string, string> | undefined
  index: Map<string, string>
  /** The index the other way round (id -> path), so updating it costs no scan. */
  indexPathOf: Map<string, string>
  downloads: Map<string, Downloaded>
  /** Ids whose server bytes this run hashed: known, not assumed from the base. */
  verified: Set<string>
  /** Ids chosen for new files before their upload (re-used after a failed or lost answer). */
  pending: PendingUploads
  /** Whether a pending entry is settled (its id synced, or its file gone), for the apply step to drop. */
  pendingSettled: (rel: string, id: string) => boolean
  tmpDir: string
  /** Made on the first download the apply step needs, once per run. */
  tmpDirMade?: Promise<unknown>
  /** Whether .cms-sync/conflicts/media/ existed: if not, no conflict copy needs removing. */
  hadConflicts: boolean
  scanProblems: ScanProblem[]
  remoteCount: number
  concurrency: number
  /** MediaDeps.history; absent (no git at hand): no base from cms-sync.lock is trusted for an overwrite. */
  history?: (relativePath: string, file: string) => Promise<boolean>
  /** Removes the run's downloads that no pull used. */
  dispose(): Promise<void>
}

let tempSerial = 0

function fileExists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  )
}

/**
 * A temp file for the bytes of `id` in the run's temp folder. Named by a hash of the id: the id
 * is the server's and may be long enough (or odd enough) to be no file name at all.
 */
export function tempFileFor(tmpDir: string, id: string): string {
  const tag = createHash('sha256').update(id).digest('hex').slice(0, 16)
  return path.join(tmpDir, `${tag}-${++tempSerial}`)
}

/**
 * The media base by id. A run that was killed between recording an item's new path and
 * dropping its old one leaves one id under two paths: the later record (the new path) is the
 * base, the older one is dropped (its path, in `stale`, for the caller to forget).
 */
export function mediaBase(store: StateStore, stale: string[] = []): Map<string, MediaBaseItem> {
  const base = new Map<string, MediaBaseItem>()
  for (const item of store.items('media')) {
    if (!item.media) continue
    const older = base.get(item.id)
    if (older) stale.push(`${MEDIA_FOLDER}/${older.rel}`)
    base.set(item.id, {
      id: item.id,
      rel: item.path.slice(MEDIA_FOLDER.length + 1),
      sha256: item.media.sha256,
      name: item.media.name,
      folder: item.media.folder,
      rev: item.remoteRev,
      ...(item.fromLock ? { fromLock: true as const } : {}),
    })
  }
  return base
}

function movedMessage(moved: readonly MovedOntoAnotherFile[]): string {
  const each = moved.map(
    (m) =>
      `it gives media id ${JSON.stringify(m.id)} to ${printable(mediaPath(m.to))}, while the file that holds that id, ${printable(mediaPath(m.from))}, is still there`,
  )
  return `${each.join('; ')} (a move or rename takes the file along; following it would replace that server item's bytes and name with another file's); nothing was sent. Restore media.yaml from the target branch (\`git checkout <branch> -- media.yaml\`), or move the file itself`
}

export async function snapshotMedia(
  root: string,
  api: MediaApi,
  store: StateStore,
  opts: PlanOptions & {
    /** Every rule, the built-in junk rules included (they spare the paths given to `track`). */
    ignored: (path: string) => boolean
    /** The user's .cmsyncignore and the never-a-resource rules only: these hold for server items too. */
    ignoredByChoice: (path: string) => boolean
    /** Told the media paths the run tracks, so the junk rules never hide a file the server has. */
    track: (paths: Iterable<string>) => void
    checksum: boolean
    concurrency: number
    /** MediaDeps.history: whether a commit of a path held a file's bytes. */
    history?: (relativePath: string, file: string) => Promise<boolean>
    /** Ids to read again whatever the listing says (MediaDeps.recheck); emptied here. */
    recheck?: Set<string>
    /** The listing, when already asked for. */
    listing?: Promise<RemoteMedia[]>
  },
): Promise<MediaRun> {
  const stale: string[] = []
  const base = mediaBase(store, stale)
  for (const stalePath of stale) await store.forget(stalePath)
  // The built-in junk rules (notes.tmp, Thumbs.db, budget.xlsx.1) keep local litter from the
  // server; they never hide an item the server has. Such an item is pulled as a file and synced
  // like any other (rather than reported as not mirrored): that keeps the server's data in the
  // workspace and in git, round trips it, and a local edit of it is seen. Only the user's
  // .cmsyncignore (a choice) leaves server items out.
  for (const [id, item] of base) if (opts.ignoredByChoice(`${MEDIA_FOLDER}/${item.rel}`)) base.delete(id)
  const indexBefore = await readMediaIndex(root)
  // Ignored paths stay in media.yaml as they are; they only take no part in the plan.
  const index = new Map(indexBefore ?? [])
  const synced = new Map([...index].filter(([rel]) => !opts.ignoredByChoice(`${MEDIA_FOLDER}/${rel}`)))
  const tracked = new Set([...synced.keys(), ...[...base.values()].map((b) => b.rel)])
  opts.track([...tracked].map(mediaPath))
  const cached = (p: string) => store.get(p)
  const scan = await scanMedia(root, cached, opts.ignored)
  // A path the scan left alone (a link in place of a file, or of a folder: everything under it)
  // takes no part in the plan, like an ignored one: its item is neither deleted on the server
  // nor pulled through the link. Its id is held too, wherever the server has moved the item.
  // It stays in media.yaml as it is.
  const held = heldBy(unsyncedPaths(scan.problems))
  const heldIds = new Set<string>()
  for (const [id, item] of base)
    if (held(mediaPath(item.rel))) {
      heldIds.add(id)
      base.delete(id)
    }
  for (const [rel, id] of [...synced])
    if (held(mediaPath(rel))) {
      heldIds.add(id)
      synced.delete(rel)
    }
  const leftOut = (path: string) => opts.ignoredByChoice(path) || held(path)
  // An unsafe name is kept for matchMedia to report by id: as a path it could even climb out of
  // the workspace, which the ignore rules would take for "ignored" and drop without a word.
  const listed = (await (opts.listing ?? api.list())).filter(
    (m) => !heldIds.has(m.id) && (unsafeMedia(m) || !leftOut(mediaPath(localRelOf(m.folder, m.name)))),
  )
  await adoptLandedMediaPushes(api, store, base, listed)
  // A file at a tracked or listed path that the walk took for junk is the item's file (a
  // workspace whose media.yaml was lost must not pull over it, and a tracked file skipped must
  // never look deleted). Only paths the rules ignore are looked at: almost always none.
  const listedRels = listed.filter((m) => !unsafeMedia(m)).map((m) => localRelOf(m.folder, m.name))
  for (const rel of new Set([...tracked, ...listedRels])) {
    if (scan.files.has(rel) || !opts.ignored(mediaPath(rel)) || opts.ignoredByChoice(mediaPath(rel))) continue
    const file = await scanMediaFileAt(root, rel, cached)
    if (file) scan.files.set(rel, file)
  }
  // A file whose upload was sent under an id but never confirmed keeps that id, as if
  // media.yaml named it (unless media.yaml or the base already place the path or the id).
  const pending = await PendingUploads.load(root)
  const known = new Set([...base.keys(), ...index.values()])
  const placed = new Set([...synced.keys(), ...[...base.values()].map((b) => b.rel)])
  let withPending = indexBefore && synced
  for (const [rel, id] of pending.byPath) {
    if (known.has(id) || placed.has(rel) || !scan.files.has(rel)) continue
    withPending = new Map(withPending ?? [])
    withPending.set(rel, id)
  }
  // A conflict stays until it is resolved: upstream's listing cannot show the byte change that
  // made it (found by --checksum or by the check before an overwrite), so while its server copy
  // is kept in .cms-sync/conflicts/ the server's bytes are looked at again on every run.
  const recheck = new Set<string>(opts.recheck)
  opts.recheck?.clear()
  if (await hasConflictCopies(root, MEDIA_FOLDER))
    for (const [id, item] of base)
      if (await fileExists(conflictCopyPath(root, `${MEDIA_FOLDER}/${item.rel}`))) recheck.add(id)
  // media.yaml is committed text: an id it moves onto another file while the id's own file is
  // still there would rename that server item and replace its bytes. Refused, before any request.
  const moved = idsMovedOntoAnotherFile(base, withPending, scan.files)
  if (moved.length > 0) throw new MediaIndexError(movedMessage(moved))
  const match = matchMedia({
    base,
    recheck,
    index: withPending,
    files: scan.files,
    remote: listed,
    checksum: opts.checksum,
  })
  opts.track(
    [
      ...tracked,
      ...[...match.remote.values()].map((r) => r.rel),
      ...[...match.local.values()].map((l) => l.rel),
    ].map(mediaPath),
  )
  const tmpDir = syncDirPath(root, 'tmp', `media-${process.pid}-${Date.now()}`)
  const downloads = new Map<string, Downloaded>()
  const verified = new Set<string>()
  if (match.needBytes.length > 0) await mkdir(tmpDir, { recursive: true })
  await inParallel(match.needBytes, opts.concurrency, async (id) => {
    const file = tempFileFor(tmpDir, id)
    const got = await api.download(id, file)
    downloads.set(id, { file, ...got })
    verified.add(id)
    match.remote.get(id)!.sha256 = got.sha256
  })
  return {
    api,
    items: planMedia(match, base, opts),
    match,
    base,
    indexBefore,
    index,
    indexPathOf: new Map([...index].map(([rel, id]) => [id, rel])),
    downloads,
    verified,
    pending,
    pendingSettled: (rel, id) => known.has(id) || !scan.files.has(rel),
    tmpDir,
    hadConflicts: await hasConflictCopies(root, MEDIA_FOLDER),
    scanProblems: scan.problems,
    remoteCount: listed.length,
    concurrency: opts.concurrency,
    ...(opts.history ? { history: opts.history } : {}),
    dispose: () => rm(tmpDir, { recursive: true, force: true }),
  }
}

/**
 * Media pushes a killed run made that its state never saved (the JSON kinds' counterpart is
 * landed-pushes.ts): where the server holds exactly the bytes the journal says were sent, they
 * are the base, so the next edit of the file is a push, not a conflict with the user's own
 * upload. Costs one hash of the server's bytes per open entry, which only a kill leaves.
 */
async function adoptLandedMediaPushes(
  api: MediaApi,
  store: StateStore,
  base: Map<string, MediaBaseItem>,
  listed: readonly RemoteMedia[],
): Promise<void> {
  const journal = store.pushes
  if (!journal) return
  for (const intent of journal.open()) {
    if (!intent.path.startsWith(`${MEDIA_FOLDER}/`)) continue
    journal.settle(intent)
    const rel = intent.path.slice(MEDIA_FOLDER.length + 1)
    const known = [...base.values()].find((item) => item.rel === rel)
    const remote = known && listed.find((m) => m.id === known.id)
    const state = store.get(intent.path)
    if (!known || !remote || !state || known.sha256 === intent.hash) continue
    if ((await api.hash(known.id))?.sha256 !== intent.hash) continue
    const rev = remote.updateDate ?? ''
    base.set(known.id, { ...known, sha256: intent.hash, name: remote.name, folder: remote.folder, rev })
    const { stat: _stat, ...rest } = state
    // No stat: the next look at the file reads it.
    store.adopt({
      ...rest,
      baseHash: intent.hash,
      remoteRev: rev,
      media: { sha256: intent.hash, name: remote.name, folder: remote.folder },
    })
  }
}
