// Media as a family of the executor (execute.ts): their stages, and the step for one item.
// Each step first checks that the side it changes is still what the plan saw (the file's stat;
// the server item's name, folder and updateDate), and commits the item's state only after the
// change is done, as for every kind.
//
// Order, and why:
//  1. local deletes, then pulls (moves and downloads), so a path freed by a delete or a move
//     can be taken by another item in the same run;
//  2. pushes: the bytes first (an upload makes the id), then the name, then the tree item,
//     because the tree is per id: a folder exists only through the items in it;
//  3. remote deletes; 4. conflicts and base merges, which change nothing on either side.
// Transfers run `concurrency` at a time; state and media.yaml are updated in memory between
// awaits, so they need no lock.

import { mkdir, rmdir } from 'node:fs/promises'
import path from 'node:path'
import type { RemoteMedia } from '../../remote/media.js'
import type { StateStore, StatSnapshot } from '../../state/state-file.js'
import { FileAppearedError } from '../../util/atomic-write.js'
import { absolute } from '../../workspace/layout.js'
import { sameStat, statLocalFile } from '../../workspace/local-file.js'
import { conflictCopyPath, type LocalWriter, removeConflictCopy } from '../../workspace/local-writes.js'
import { MEDIA_INDEX, mediaIndexText } from '../../workspace/media-index.js'
import { refuseLinks } from '../../workspace/no-follow.js'
import type { ItemResult } from '../apply-item.js'
import type { Family } from '../execute.js'
import { unprovenReason } from '../lock-proof.js'
import type { PlanItem } from '../plan.js'
import {
  type LocalSide,
  type MediaBaseItem,
  type RemoteSide,
  serverPlaceOf,
  splitRel,
} from './media-match.js'
import { MEDIA_FOLDER, mediaPath } from './media-plan.js'
import { type MediaRun, tempFileFor } from './media-snapshot.js'

export interface MediaApplyContext {
  root: string
  store: StateStore
  writer: LocalWriter
  run: MediaRun
}

const applied: ItemResult = { status: 'applied' }
const changedLocally: ItemResult = { status: 'conflict', reason: 'the file changed during the run' }
const changedRemotely: ItemResult = {
  status: 'conflict',
  reason: 'the server copy changed since it was listed',
}

const relOf = (item: PlanItem) => item.path.slice(MEDIA_FOLDER.length + 1)
const keyOf = (item: PlanItem) => item.id || `new:${relOf(item)}`

async function localAsPlanned(
  ctx: MediaApplyContext,
  side: LocalSide | undefined,
  rel: string,
): Promise<boolean> {
  const now = await statLocalFile(ctx.root, mediaPath(side?.rel ?? rel))
  return side ? sameStat(side.stat, now) : now === undefined
}

function remoteAsPlanned(current: RemoteMedia | undefined, side: RemoteSide | undefined): boolean {
  if (!current || !side) return !current && !side
  return (
    current.name === side.name && current.folder === side.folder && (current.updateDate ?? '') === side.rev
  )
}

/** Removes folders under media/ that a move or delete left empty (cms-sync never keeps empty folders). */
async function pruneEmptyFolders(root: string, rel: string): Promise<void> {
  for (
    let folder = path.posix.dirname(rel);
    folder !== '.' && folder !== '';
    folder = path.posix.dirname(folder)
  ) {
    try {
      await rmdir(absolute(root, mediaPath(folder)))
    } catch {
      return
    }
  }
}

async function commit(
  ctx: MediaApplyContext,
  id: string,
  rel: string,
  sha256: string,
  remote: { name: string; folder: string; rev: string },
  /**
   * The stat that vouches for `sha256`: the one our own placement of the file produced, or the
   * one the scan took before it read the bytes. Never a stat taken now: a file saved again
   * while its bytes were uploaded would pair the new stat with the old hash, and no later run
   * would see the edit.
   */
  stat: StatSnapshot,
  /** The server's bytes were read or written by this run (else the item keeps its earlier time). */
  bytesSeen: boolean,
): Promise<void> {
  const base = ctx.run.base.get(id)
  const seen = bytesSeen || ctx.run.verified.has(id)
  const verifiedAt = seen ? new Date().toISOString() : ctx.store.get(mediaPath(base?.rel ?? rel))?.verifiedAt
  // The new record first, the old path's after: a state save may fall between the two (saves
  // are batched), and a state holding neither would leave the next run with an id media.yaml
  // places at a vanished path and no base to find the renamed file by: it would upload the
  // file again as a new item (a kill right after a pushed rename leaves exactly that).
  await ctx.store.commit({
    kind: 'media',
    id,
    path: mediaPath(rel),
    baseHash: sha256,
    remoteRev: remote.rev,
    stat,
    media: { sha256, name: remote.name, folder: remote.folder },
    ...(verifiedAt ? { verifiedAt } : {}),
  })
  if (base && base.rel !== rel) await ctx.store.forget(mediaPath(base.rel))
  setIndex(ctx, id, rel)
  if (ctx.run.hadConflicts) await removeConflictCopy(ctx.root, mediaPath(rel))
}

function setIndex(ctx: MediaApplyContext, id: string, rel: string | undefined): void {
  const { index, indexPathOf } = ctx.run
  const known = indexPathOf.get(id)
  if (known !== undefined && index.get(known) === id) index.delete(known)
  indexPathOf.delete(id)
  if (rel === undefined) return
  index.set(rel, id)
  indexPathOf.set(id, rel)
}

async function forget(ctx: MediaApplyContext, item: PlanItem, id: string): Promise<void> {
  const base = ctx.run.base.get(id)
  if (base) await ctx.store.forget(mediaPath(base.rel))
  await ctx.store.forget(item.path)
  setIndex(ctx, id, undefined)
  if (ctx.run.hadConflicts) await removeConflictCopy(ctx.root, item.path)
}

/** The server's bytes in a temp file: the one the plan already downloaded, else a new download. */
async function serverBytes(ctx: MediaApplyContext, id: string) {
  const known = ctx.run.downloads.get(id)
  if (known) {
    ctx.run.downloads.delete(id)
    return known
  }
  ctx.run.tmpDirMade ??= mkdir(ctx.run.tmpDir, { recursive: true })
  await ctx.run.tmpDirMade
  const file = tempFileFor(ctx.run.tmpDir, id)
  return { file, ...(await ctx.run.api.download(id, file)) }
}

/**
 * Before the server's bytes of an item are overwritten or deleted: whether they are still the
 * base. Spec's updateDate vouches for them (remoteAsPlanned compares it); upstream lists no
 * date and a same-name byte change shows nowhere else, so what the server holds is hashed,
 * unless this run already did. A download is cheaper than a lost file. When they changed, the
 * item is a conflict: the server's bytes go next to the state, nothing is written.
 */
async function serverBytesChanged(
  ctx: MediaApplyContext,
  item: PlanItem,
  remote: RemoteSide,
): Promise<ItemResult | undefined> {
  const base = ctx.run.base.get(remote.id)
  // A base from cms-sync.lock is committed text (a pull request's, in CI): its revision vouches
  // for nothing, so the bytes are read on every server, and must be a version git has of the file.
  if (!base) return undefined
  const fromLock = base.fromLock === true
  if (!fromLock && (remote.rev !== '' || ctx.run.verified.has(remote.id))) return undefined
  const bytes = await serverBytes(ctx, remote.id)
  ctx.run.downloads.set(remote.id, bytes)
  ctx.run.verified.add(remote.id)
  if (bytes.sha256 === base.sha256) {
    if (!fromLock || (await ctx.run.history?.(mediaPath(base.rel), bytes.file))) return undefined
    await recordMediaConflict(ctx, item)
    return { status: 'conflict', reason: unprovenReason(mediaPath(base.rel)) }
  }
  remote.sha256 = bytes.sha256
  // The report says what the check found, not what the listing let the plan assume.
  item.remote = 'modified'
  await recordMediaConflict(ctx, item)
  return { status: 'conflict', reason: 'the server holds other bytes than at the last sync' }
}

/**
 * The server folder and name a file stands for. A part of the path unchanged since the last
 * sync keeps the server's spelling recorded then (a file named `photo~ab12.png` beside
 * `photo.png`, or one the server renamed on upload, is not renamed by a push of new bytes);
 * a part the person changed is decoded from the file name (file-names.ts).
 */
function serverPlace(rel: string, base: MediaBaseItem | undefined): { folder: string; name: string } {
  const decoded = serverPlaceOf(rel)
  if (!base) return decoded
  const now = splitRel(rel)
  const then = splitRel(base.rel)
  return {
    folder: now.folder === then.folder ? base.folder : decoded.folder,
    name: now.name === then.name ? base.name : decoded.name,
  }
}

async function pushMedia(ctx: MediaApplyContext, item: PlanItem): Promise<ItemResult> {
  const local = ctx.run.match.local.get(keyOf(item))
  if (!local || !(await localAsPlanned(ctx, local, local.rel))) return changedLocally
  const remote = local.id ? ctx.run.match.remote.get(local.id) : undefined
  const base = local.id ? ctx.run.base.get(local.id) : undefined
  const { api } = ctx.run
  if (remote) {
    if (!remoteAsPlanned(await api.get(remote.id), remote)) return changedRemotely
    if (item.settledFor === 'local')
      await ctx.writer.keepRemoteFileInTrash(item.path, (await serverBytes(ctx, remote.id)).file)
  }
  const { folder, name } = serverPlace(local.rel, base)
  // The upload opens the path: never through a link put there since the scan (no-follow.ts).
  refuseLinks(ctx.root, mediaPath(local.rel))
  const file = { path: absolute(ctx.root, mediaPath(local.rel)), size: local.size, name }
  let id = local.id
  let uploaded = false
  if (!remote) {
    // A new item: its id, then its tree item, then its bytes (which make it appear in the
    // listing). Placed first, it appears where it belongs, so a kill between two steps never
    // leaves a listed item in another folder that the next run would take for a second item
    // and upload again; a tree item whose bytes never came is harmless (the tree only places
    // ids that exist).
    // (An id media.yaml already gives it is kept: the item is re-created under it.)
    if (id === undefined) {
      id = await api.newId()
      // On disk before a byte is sent: whatever the answer (or none), the next run re-uses it.
      await ctx.run.pending.record(local.rel, id)
    }
    await api.move(id, folder)
    id = (await api.upload({ ...file, sha256: local.sha256 }, id)).id
    uploaded = true
    // The report names the id the new item got (the plan could not know it).
    item.id = id
  } else if (local.sha256 !== (remote.sha256 ?? base?.sha256)) {
    if (item.settledFor !== 'local') {
      const changed = await serverBytesChanged(ctx, item, remote)
      if (changed) return changed
    }
    // New bytes: the upload also sets the name.
    id = (await api.upload({ ...file, sha256: local.sha256 }, id)).id
    uploaded = true
  } else if ((base ? base.name : remote.name) !== name) {
    await api.rename(remote.id, name)
  }
  if (remote && remote.folder !== folder) await api.move(id!, folder)
  // What the server holds now: its name (upstream rewrites uploaded names) and revision.
  let stored = await api.get(id!)
  if (!stored)
    return { status: 'failed', error: `the server accepted media "${id}" but does not have it afterwards` }
  // An existing item keeps its name through new bytes: upstream's upload rewrote it (`a:b.png`
  // becomes `a-b.png`), which a rename puts right, so a round trip leaves the server as it was.
  if (remote && stored.name !== name) {
    await api.rename(id!, name)
    stored = (await api.get(id!)) ?? stored
  }
  await commit(
    ctx,
    id!,
    local.rel,
    local.sha256,
    { name: stored.name, folder: stored.folder, rev: stored.updateDate ?? '' },
    local.stat,
    // An upload sends the bytes; a rename or a move leaves them as they were read, or not.
    uploaded,
  )
  return applied
}

async function pullMedia(ctx: MediaApplyContext, item: PlanItem): Promise<ItemResult> {
  const remote = ctx.run.match.remote.get(item.id)!
  const local = ctx.run.match.local.get(item.id)
  // A file the scan saw is checked now; a path it saw free is claimed atomically by place().
  if (local && !(await localAsPlanned(ctx, local, remote.rel))) return changedLocally
  let sha256 = local?.sha256
  if (local && local.rel !== remote.rel) {
    await ctx.writer.keepInTrash(mediaPath(local.rel))
    await ctx.writer.move(mediaPath(local.rel), mediaPath(remote.rel), local.sha256)
    await pruneEmptyFolders(ctx.root, local.rel)
  }
  // A move keeps the file's stat (rename keeps inode, size and mtime): the scan's still vouches.
  let written = local?.stat
  let downloaded = false
  if (!local || local.sha256 !== remote.sha256) {
    downloaded = true
    const bytes = await serverBytes(ctx, remote.id)
    try {
      written = await ctx.writer.place(mediaPath(remote.rel), bytes.file, {
        sha256: bytes.sha256,
        fresh: !local,
      })
    } catch (error) {
      if (error instanceof FileAppearedError) return changedLocally
      throw error
    }
    sha256 = bytes.sha256
  }
  await commit(ctx, remote.id, remote.rel, sha256!, remote, written!, downloaded)
  return applied
}

async function deleteLocalMedia(ctx: MediaApplyContext, item: PlanItem): Promise<ItemResult> {
  const local = ctx.run.match.local.get(item.id)
  if (!local || !(await localAsPlanned(ctx, local, local.rel))) return changedLocally
  await ctx.writer.remove(mediaPath(local.rel))
  await pruneEmptyFolders(ctx.root, local.rel)
  await forget(ctx, item, item.id)
  return applied
}

async function deleteRemoteMedia(ctx: MediaApplyContext, item: PlanItem): Promise<ItemResult> {
  const remote = ctx.run.match.remote.get(item.id)
  if (!(await localAsPlanned(ctx, undefined, relOf(item)))) return changedLocally
  let kept: string | undefined
  if (remote) {
    if (!remoteAsPlanned(await ctx.run.api.get(remote.id), remote)) return changedRemotely
    if (item.settledFor !== 'local') {
      const changed = await serverBytesChanged(ctx, item, remote)
      if (changed) return changed
    }
    // Every server copy a run deletes is kept first (the check above may have downloaded it).
    kept = await ctx.writer.keepRemoteFileInTrash(item.path, (await serverBytes(ctx, remote.id)).file)
    await ctx.run.api.remove(remote.id)
  }
  await forget(ctx, item, item.id)
  return kept === undefined ? applied : { status: 'applied', kept }
}

/** Both versions kept: the file stays, the server's bytes go next to the state for people to compare. */
async function recordMediaConflict(ctx: MediaApplyContext, item: PlanItem): Promise<ItemResult> {
  const remote = ctx.run.match.remote.get(item.id)
  const local = ctx.run.match.local.get(keyOf(item))
  if (remote && (!local || local.sha256 !== remote.sha256)) {
    const bytes = await serverBytes(ctx, remote.id)
    const copy = conflictCopyPath(ctx.root, item.path)
    const { mkdir, rename } = await import('node:fs/promises')
    await mkdir(path.dirname(copy), { recursive: true })
    await rename(bytes.file, copy)
  }
  if (local?.id) setIndex(ctx, local.id, local.rel)
  return { status: 'conflict' }
}

async function mergeOrKeep(ctx: MediaApplyContext, item: PlanItem): Promise<ItemResult | undefined> {
  const local = ctx.run.match.local.get(item.id)
  const remote = ctx.run.match.remote.get(item.id)
  if (item.action === 'merge-base' && (!local || !remote)) {
    await forget(ctx, item, item.id)
    return applied
  }
  if (!local || !remote) return undefined
  const known = ctx.store.get(item.path)
  // Unchanged but touched, or a first sync that found both sides equal: record the base.
  if (
    item.action === 'merge-base' ||
    !known ||
    !sameStat(known.stat, local.stat) ||
    !ctx.run.index.has(local.rel)
  )
    await commit(ctx, item.id, local.rel, local.sha256, remote, local.stat, false)
  return item.action === 'merge-base' ? applied : undefined
}

function step(ctx: MediaApplyContext, item: PlanItem): Promise<ItemResult | undefined> {
  switch (item.action) {
    case 'push':
      return pushMedia(ctx, item)
    case 'pull':
      return pullMedia(ctx, item)
    case 'delete-local':
      return deleteLocalMedia(ctx, item)
    case 'delete-remote':
      return deleteRemoteMedia(ctx, item)
    case 'conflict':
    // Media bytes never merge (design.md "Merging"): a plan never marks media `merge`.
    case 'merge':
      return recordMediaConflict(ctx, item)
    case 'merge-base':
    case 'none':
      return mergeOrKeep(ctx, item)
    // Only content is published; a media entry never gets one.
    case 'publish':
    case 'unpublish':
      return Promise.resolve(undefined)
  }
}

export function mediaFamily(ctx: MediaApplyContext, selected: readonly PlanItem[]): Family {
  const phase = (...actions: string[]) => selected.filter((item) => actions.includes(item.action))
  const pulls = phase('pull')
  const moves = pulls.filter((item) => ctx.run.match.local.has(item.id))
  const { concurrency } = ctx.run
  return {
    stages: [
      { items: phase('delete-local'), parallelism: 1 },
      // Moves one at a time (two may swap places), downloads side by side.
      { items: moves, parallelism: 1 },
      { items: pulls.filter((item) => !moves.includes(item)), parallelism: concurrency },
      { items: phase('push'), parallelism: concurrency },
      { items: phase('delete-remote', 'conflict', 'merge-base', 'none'), parallelism: 1 },
    ],
    // A kill after the server's answer, before the state's save, leaves the next run knowing the
    // server holds our bytes (media-snapshot.ts adoptLandedMediaPushes).
    pushes: phase('push').flatMap((item) => {
      const local = ctx.run.match.local.get(keyOf(item))
      return local?.id ? [{ path: mediaPath(local.rel), hash: local.sha256 }] : []
    }),
    step: (item) => step(ctx, item),
    // Also after a stop: media.yaml keeps what the items that went through changed.
    finish: async () => {
      await writeIndex(ctx)
      await ctx.run.pending.prune(ctx.run.pendingSettled)
      await ctx.run.dispose()
    },
  }
}

/** media.yaml, rewritten only when the run changed it (or it was missing while media exist). */
async function writeIndex(ctx: MediaApplyContext): Promise<void> {
  const { index, indexBefore: before } = ctx.run
  if (before === undefined && index.size === 0) return
  // Compared as mappings: rendering every entry twice (each scalar checked by a YAML parse)
  // cost a good part of every poll of `watch` (docs/benchmarks.md, "Figures behind code comments").
  if (
    before !== undefined &&
    before.size === index.size &&
    [...index].every(([p, id]) => before.get(p) === id)
  )
    return
  await ctx.writer.write(MEDIA_INDEX, mediaIndexText(index))
}
