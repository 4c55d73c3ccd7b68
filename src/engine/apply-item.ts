// Carrying out one plan entry. Each action checks, just before it acts, that the side it is
// about to overwrite is still what the plan saw (Mutagen's ensureExpectedFile): a remote edit
// made since the listing, or a local edit made since the scan, turns into a conflict instead of
// being overwritten. State for the item is committed only after the change is done.

import { itemLogger } from '../log/item-lines.js'
import { RemoteError } from '../remote/errors.js'
import type { BaseStore } from '../state/base-store.js'
import type { RecentPushes, RevertedLeaf } from '../state/recent-pushes.js'
import type { ItemState, StateStore, StatSnapshot } from '../state/state-file.js'
import { FileAppearedError } from '../util/atomic-write.js'
import {
  type Codec,
  type FileBytes,
  fileBytes,
  type JsonObject,
  type ReferenceContext,
} from '../workspace/codec.js'
import { type ParsedFile, readLocalFile, sameStat, statLocalFile } from '../workspace/local-file.js'
import { type LocalWriter, removeConflictCopy, writeConflictCopy } from '../workspace/local-writes.js'
import type { LocalEntry } from '../workspace/scan.js'
import type { PlannedMerge, SideText } from './merges.js'
import { describeReverted, leafChanges, revertedLeaves } from './own-pushes.js'
import type { PlanItem } from './plan.js'
import type { EngineLogger, RemotePort } from './remote-port.js'
import { fullObject, type RemoteEntry } from './remote-snapshot.js'

export interface ApplyContext {
  root: string
  client: RemotePort
  store: StateStore
  writer: LocalWriter
  logger: EngineLogger
  now: () => string
  /** What references in a file are checked against just before a write (schema ids, connection types). */
  references: ReferenceContext
  local: ReadonlyMap<string, LocalEntry>
  remote: ReadonlyMap<string, RemoteEntry>
  /** `remote` was read item by item just before the plan (an edit-only run): no second read. */
  remoteReadJustNow?: boolean
  /** Whether .cms-sync/conflicts/ existed when the run began: if not, no copy needs removing. */
  hadConflicts: boolean
  /** The planned merges of items changed on both sides, by path (merges.ts). */
  merges: ReadonlyMap<string, PlannedMerge>
  /** Which side a merge writes: both, or the file only (pull), or the server only (push). */
  mergeWrites: 'both' | 'local' | 'remote'
  /** Where each committed base's text is kept, for later merges. */
  bases: BaseStore
  /** A base's text: kept in .cms-sync/bases/, else from git (EngineDeps.baseFallback). */
  baseText?: (item: PlanItem, hash: string, codec: Codec) => Promise<string | undefined>
  /**
   * The publishes and unpublishes this run carries out, by path: the write before one records
   * that the deployment is owed (ItemState.deploy), so a run that stops or fails in between
   * leaves the next run knowing it.
   */
  deploys?: ReadonlyMap<string, 'publish' | 'unpublish'>
  /** Whether the publish of an item this run writes waits for a later run (ApplyOptions.deferPublish). */
  deferPublish?: (path: string) => boolean
  /** Told of each item this run wrote to the server: what was sent, and what the server answered. */
  onServerWrite?: (path: string, sent: JsonObject, stored: JsonObject) => void
  /**
   * Server copies this run itself made before a later step of the same item (an unpublish before
   * its delete), by path: the hash of their file form, a base as good as the planned one.
   */
  ownCopies?: ReadonlyMap<string, string>
  /** What this workspace recently pushed, leaf by leaf: a pull that puts one back is told. */
  recent?: RecentPushes
}

export type ItemResult =
  /** kept: where the server's copy went before it was deleted (workspace-relative, in trash). */
  | { status: 'applied'; kept?: string; reverted?: RevertedLeaf[]; trash?: string }
  | { status: 'conflict'; reason?: string }
  | { status: 'failed'; error: string; code?: string }

const applied: ItemResult = { status: 'applied' }
const changedLocally: ItemResult = { status: 'conflict', reason: 'the file changed during the run' }
const changedRemotely: ItemResult = {
  status: 'conflict',
  reason: 'the server copy changed since it was listed',
}

/**
 * A revision is a claim (cms-sync.lock's `rev` is committed text a pull request can set to the
 * server's current one): before the server's copy is overwritten or deleted as unchanged since
 * the base, its content, read by id just now, must be the base's too (either base, where the
 * state and the lock disagree).
 */
async function serverHoldsBase(
  ctx: ApplyContext,
  item: PlanItem,
  codec: Codec,
  current: JsonObject,
): Promise<boolean> {
  const known = ctx.store.get(item.path)
  if (!known) return true
  const file = codec.toFile(current)
  if (ctx.ownCopies?.get(item.path) === fileBytes(file).hash) return true
  if (codec.sameApartFromSecrets)
    return secretsHoldBase(ctx, item, codec, known.baseHash, file, codec.sameApartFromSecrets)
  const hash = fileBytes(file).hash
  return hash === known.baseHash || ctx.store.alternates.get(item.path)?.baseHash === hash
}

/**
 * A file form with secrets (connections) takes its reference names from the file on disk, which
 * the push is changing, so its hash says nothing here: the server's copy is compared with the
 * base's text, a secret's reference equal to any other (codec.sameApartFromSecrets). Without the
 * base's text (none kept, none in git) its revision is all there is to go by.
 */
async function secretsHoldBase(
  ctx: ApplyContext,
  item: PlanItem,
  codec: Codec,
  baseHash: string,
  file: JsonObject,
  same: (base: unknown, file: JsonObject) => boolean,
): Promise<boolean> {
  const text = await ctx.baseText?.(item, baseHash, codec)
  if (text === undefined) return true
  return same(JSON.parse(text), file)
}

const notTheBase: ItemResult = {
  status: 'conflict',
  reason:
    "the server copy is not the base, though its revision is the base's (a revision in cms-sync.lock that does not belong to its hash); nothing was written",
}

/** Whether the write replaces a server copy the plan took to be the base on the word of its revision. */
function overwritesUnverified(item: PlanItem, current: JsonObject | undefined): current is JsonObject {
  return current !== undefined && item.remote === 'unchanged' && item.settledFor !== 'local'
}

async function localAsPlanned(ctx: ApplyContext, item: PlanItem, codec: Codec): Promise<boolean> {
  const planned = ctx.local.get(item.path)
  const now = await statLocalFile(ctx.root, item.path)
  if (!planned || !now) return !planned && !now
  if (sameStat(planned.stat, now)) return true
  const parsed = await readLocalFile(ctx.root, item.path, codec, item.id)
  return !!parsed && parsed.hash === planned.hash
}

async function remoteAsPlanned(ctx: ApplyContext, item: PlanItem, codec: Codec) {
  // The plan's own read by id was moments ago, as close to the write as this one would be (the
  // API has no conditional write, so some gap is always there); a listing may be seconds old.
  if (ctx.remoteReadJustNow) {
    const planned = ctx.remote.get(item.path)
    return { ok: true, current: planned?.object, rev: planned?.rev }
  }
  const current = await ctx.client.get(item.kind, item.id)
  const rev = current ? codec.revisionOf(current) : undefined
  return { ok: rev === ctx.remote.get(item.path)?.rev, current, rev }
}

/**
 * The server's copy a write may go over: as the plan saw it, and the base itself where the plan
 * took it for the base on its revision alone; otherwise the result that stops the write.
 */
async function remoteToOverwrite(
  ctx: ApplyContext,
  item: PlanItem,
  codec: Codec,
): Promise<{ stop: ItemResult } | { remote: Awaited<ReturnType<typeof remoteAsPlanned>> }> {
  const remote = await remoteAsPlanned(ctx, item, codec)
  if (!remote.ok) return { stop: changedRemotely }
  if (
    overwritesUnverified(item, remote.current) &&
    !(await serverHoldsBase(ctx, item, codec, remote.current))
  )
    return { stop: notTheBase }
  return { remote }
}

/**
 * Which stat the state may vouch for (an equal stat later means equal content): the one our own
 * write produced; the one a read saw, if the file still has it; or none, so the next scan reads
 * the file.
 */
type Vouch = { written: StatSnapshot } | { read: ItemState['stat'] } | 'none'

async function vouchedStat(ctx: ApplyContext, item: PlanItem, vouch: Vouch) {
  if (vouch === 'none') return undefined
  if ('written' in vouch) return vouch.written
  const now = await statLocalFile(ctx.root, item.path)
  return sameStat(vouch.read, now) ? now : undefined
}

async function clearConflictCopy(ctx: ApplyContext, item: PlanItem): Promise<void> {
  if (ctx.hadConflicts) await removeConflictCopy(ctx.root, item.path)
}

/** The deployment the state owes for the item after this entry (see ApplyContext.deploys). */
function owedDeploy(ctx: ApplyContext, item: PlanItem): Pick<ItemState, 'deploy'> {
  if (item.action === 'publish' || item.action === 'unpublish') return {}
  const deploy = ctx.deploys?.get(item.path)
  return deploy ? { deploy } : {}
}

export async function commit(
  ctx: ApplyContext,
  item: PlanItem,
  bytes: FileBytes,
  stored: JsonObject,
  codec: Codec,
  vouch: Vouch,
  /** Still inherited after this step: a pull of a listed inherited item; never after our write. */
  inheritedAfter = false,
  /**
   * The revision to record when it is not the stored copy's (a push's half of a merge), or the
   * stored copy's as the snapshot already took it (a pull of a listed item).
   */
  remoteRev?: string,
) {
  const stat = await vouchedStat(ctx, item, vouch)
  await ctx.bases.keep(bytes.hash, bytes.text)
  await ctx.store.commit({
    kind: item.kind,
    id: item.id,
    path: item.path,
    baseHash: bytes.hash,
    remoteRev: remoteRev ?? codec.revisionOf(stored),
    ...(stat ? { stat } : {}),
    ...('createDate' in stored ? { createDate: (stored.createDate as string | null) ?? null } : {}),
    ...(inheritedAfter ? { inherited: true as const } : {}),
    ...owedDeploy(ctx, item),
  })
  await clearConflictCopy(ctx, item)
}

export async function pushItem(
  ctx: ApplyContext,
  item: PlanItem,
  codec: Codec,
  prepared: { parsed: ParsedFile; stat: ItemState['stat'] },
): Promise<ItemResult> {
  const { parsed } = prepared
  const known = ctx.store.get(item.path)
  if (parsed.hash !== ctx.local.get(item.path)?.hash) return changedLocally
  if (!parsed.ok) return { status: 'failed', error: parsed.problems.join('; ') }
  const problems = codec.checkReferences(parsed.file, ctx.references)
  if (problems.length > 0) return { status: 'failed', error: problems.join('; ') }
  if (!(await localAsPlanned(ctx, item, codec))) return changedLocally
  const checked = await remoteToOverwrite(ctx, item, codec)
  if ('stop' in checked) return checked.stop
  const { remote } = checked
  if (item.settledFor === 'local' && remote.current) {
    await ctx.writer.keepRemoteInTrash(item.path, fileBytes(codec.toFile(remote.current)).text)
  }
  // The server holds only its parent's locked copy: it makes its own local copy first (which
  // equals what we planned against), so the write below edits that copy, never the parent's.
  if (ctx.remote.get(item.path)?.inherited && remote.current)
    await ctx.client.pullInherited(item.kind, item.id)
  const file = parsed.file
  const body = codec.toBody(file, {
    current: remote.current,
    baseCreateDate: known?.createDate,
    now: ctx.now(),
    ...(item.keepServerSecrets ? { keepServerSecrets: true } : {}),
  })
  let stored: JsonObject
  try {
    stored = await ctx.client.put(item.kind, item.id, body, {
      expected: (current) => (current ? codec.revisionOf(current) : undefined) === remote.rev,
    })
  } catch (error) {
    const missing = missingParent(codec, file, error)
    if (missing) return missing
    throw error
  }
  ctx.onServerWrite?.(item.path, body, stored)
  const storedFile = codec.fromWriteAnswer(stored, file)
  const storedBytes = fileBytes(storedFile)
  // What this push changed, leaf by leaf, so an editor's stale full save of it can be told.
  // Kinds with secrets are left out: nothing of theirs is kept beside the state but ${ENV} references.
  if (remote.current && !codec.sameApartFromSecrets)
    ctx.recent?.pushed(item.path, {
      kind: item.kind,
      id: item.id,
      at: ctx.now(),
      leaves: leafChanges(codec.toFile(remote.current), storedFile),
    })
  // The server normalised something (a recomputed sort, a renamed editor): mirror it now, so
  // the file equals the base and the next run sees no echo.
  if (storedBytes.text === parsed.text) {
    await commit(ctx, item, storedBytes, stored, codec, { read: prepared.stat })
  } else if (await localAsPlanned(ctx, item, codec)) {
    const written = await ctx.writer.write(item.path, storedBytes.text, storedBytes.hash)
    await commit(ctx, item, storedBytes, stored, codec, { written })
  } else {
    // The file was edited while we wrote: the base is what the server holds, and the new edit
    // (never vouched for by a stat) shows as a local change next time.
    await commit(ctx, item, storedBytes, stored, codec, 'none')
  }
  return applied
}

/**
 * The server refused the write because the parent the file names does not exist (a parent
 * deleted on the server, a typo): said as such, instead of the generic "not found" advice to
 * check the server URL.
 */
function missingParent(codec: Codec, file: JsonObject, error: unknown): ItemResult | undefined {
  const parent = codec.parentOf(file)
  if (parent === undefined || !codec.parentField) return undefined
  if (!(error instanceof RemoteError) || error.code !== 'not-found') return undefined
  if (!error.serverMessage?.includes(JSON.stringify(parent))) return undefined
  return {
    status: 'failed',
    code: 'rejected',
    error:
      `${codec.parentField} ${JSON.stringify(parent)} does not exist on the server ` +
      `(${error.method} ${error.route} -> ${error.status}: ${error.serverMessage}); ` +
      `create that ${codec.kind} first, or change ${codec.parentField} in the file`,
  }
}

export async function pullItem(ctx: ApplyContext, item: PlanItem, codec: Codec): Promise<ItemResult> {
  const entry = ctx.remote.get(item.path)!
  // A file the scan saw is checked now; a path it saw free is claimed atomically by create().
  const fresh = !ctx.local.has(item.path)
  if (!fresh && !(await localAsPlanned(ctx, item, codec))) return changedLocally
  const object = await fullObject(ctx.client, entry)
  if (!object) return changedRemotely
  // The snapshot already made the bytes of a listed item to hash them.
  const bytes = object === entry.object && entry.bytes ? entry.bytes : fileBytes(codec.toFile(object))
  let written: StatSnapshot
  try {
    written = fresh
      ? await ctx.writer.create(item.path, bytes.text, bytes.hash)
      : await ctx.writer.write(item.path, bytes.text, bytes.hash)
  } catch (error) {
    if (error instanceof FileAppearedError) return changedLocally
    throw error
  }
  // The listed copy's revision was taken by the snapshot (for content, a canonical form and a
  // sha256 of the item): not taken again.
  const rev = object === entry.object ? entry.rev : undefined
  await commit(ctx, item, bytes, object, codec, { written }, entry.inherited, rev)
  return revertCheck(ctx, item, object, codec)
}

/**
 * A pull that puts leaves back to their values before our own recent push (an editor saved the
 * whole item as loaded before it): applied as any pull, and told, with the file as pushed kept
 * in trash (the write just put it there) for `cms-sync push --again`.
 */
function revertCheck(ctx: ApplyContext, item: PlanItem, object: JsonObject, codec: Codec): ItemResult {
  const push = ctx.recent?.get(item.path)
  if (!push || !ctx.recent) return applied
  const reverted = revertedLeaves(push, codec.toFile(object))
  if (reverted.length === 0) {
    // The server moved on from what we pushed some other way: no longer ours to tell about.
    if (push.reverted) ctx.recent.forget(item.path)
    return applied
  }
  const trash = ctx.writer.trashedCopyOf(item.path)
  ctx.recent.markReverted(item.path, { at: ctx.now(), leaves: reverted, trash })
  itemLogger(ctx.logger).warn(
    { path: item.path, reverted, trash },
    `reverted on the server: ${item.path} ${describeReverted(reverted)}; ours is kept in ${trash}; \`cms-sync push --again ${item.path}\` sends it again`,
  )
  return { status: 'applied', reverted, trash }
}

export async function deleteLocalItem(ctx: ApplyContext, item: PlanItem, codec: Codec): Promise<ItemResult> {
  if (!(await localAsPlanned(ctx, item, codec))) return changedLocally
  await ctx.writer.remove(item.path)
  await ctx.store.forget(item.path)
  await clearConflictCopy(ctx, item)
  return applied
}

export async function deleteRemoteItem(ctx: ApplyContext, item: PlanItem, codec: Codec): Promise<ItemResult> {
  if (!(await localAsPlanned(ctx, item, codec))) return changedLocally
  if (ctx.remote.get(item.path)?.inherited)
    return {
      status: 'failed',
      code: 'inherited',
      error:
        'inherited from the parent project: this project cannot delete it; delete it on the parent, ' +
        'or restore the file (e.g. `git checkout -- <file>`)',
    }
  const checked = await remoteToOverwrite(ctx, item, codec)
  if ('stop' in checked) return checked.stop
  const { remote } = checked
  // Every server copy a run deletes is kept first, whoever asked for the delete (a CI run keeps
  // .cms-sync/trash/ as an artifact): the report names where.
  let kept: string | undefined
  if (remote.current)
    kept = await ctx.writer.keepRemoteInTrash(item.path, fileBytes(codec.toFile(remote.current)).text)
  if (remote.current && codec.holdsEntries) await keepEntries(ctx, item)
  if (remote.current) await ctx.client.remove(item.kind, item.id)
  await ctx.store.forget(item.path)
  await clearConflictCopy(ctx, item)
  return kept === undefined ? applied : { status: 'applied', kept }
}

/**
 * Entries (a form's) are people's data and in no file: read just before the item is deleted and
 * kept in .cms-sync/trash/<run>/forms/<id>.entries.json, so no delete loses them unseen.
 */
async function keepEntries(ctx: ApplyContext, item: PlanItem): Promise<void> {
  const entries = await ctx.client.formEntries?.(item.id)
  if (!entries || entries.length === 0) return
  await ctx.writer.keepEntriesInTrash(item.path, `${JSON.stringify(entries, null, 2)}\n`)
  ctx.logger.info(
    { path: item.path, entries: entries.length },
    'form entries kept in trash before the delete',
  )
}

/** Both sides agree (equal content, or both gone): only the base moves. */
export async function mergeBaseItem(ctx: ApplyContext, item: PlanItem): Promise<ItemResult> {
  const local = ctx.local.get(item.path)
  const remote = ctx.remote.get(item.path)
  if (!local || !remote) {
    await ctx.store.forget(item.path)
    await clearConflictCopy(ctx, item)
    return applied
  }
  if (remote.bytes?.hash === local.hash) await ctx.bases.keep(remote.bytes.hash, remote.bytes.text)
  await ctx.store.commit({
    kind: item.kind,
    id: item.id,
    path: item.path,
    baseHash: local.hash,
    remoteRev: remote.rev,
    stat: local.stat,
    ...(remote.inherited ? { inherited: true as const } : {}),
    ...('createDate' in remote.object
      ? { createDate: (remote.object.createDate as string | null) ?? null }
      : {}),
    ...owedDeploy(ctx, item),
  })
  await clearConflictCopy(ctx, item)
  return applied
}

/** Unchanged, but the file was touched (same content, new mtime): its stat cache needs a refresh. */
export function statCacheStale(ctx: Pick<ApplyContext, 'store' | 'local'>, item: PlanItem): boolean {
  const known = ctx.store.get(item.path)
  const local = ctx.local.get(item.path)
  return !!known && !!local && !sameStat(known.stat, local.stat)
}

export async function refreshStatCache(ctx: ApplyContext, item: PlanItem): Promise<void> {
  const known = ctx.store.get(item.path)
  const local = ctx.local.get(item.path)
  if (known && local && statCacheStale(ctx, item)) await ctx.store.commit({ ...known, stat: local.stat })
}

/** Keeps the server's side of a conflict next to the state, for `diff` and for people. */
export async function recordConflict(ctx: ApplyContext, item: PlanItem, codec: Codec): Promise<void> {
  const entry = ctx.remote.get(item.path)
  const object = entry ? await fullObject(ctx.client, entry) : undefined
  await writeConflictCopy(ctx.root, item.path, object ? fileBytes(codec.toFile(object)).text : undefined)
}

/**
 * Both sides changed different leaves: each side gets the merge (design.md "Merging"), or one
 * half of it (pull: the file; push: the server). As with a push, the file must still be what
 * was planned and the server copy what was listed, and the server copy that the merge replaces
 * goes to trash first. The base moves to the merge only when both sides hold it; after a half,
 * it moves to the side left as it was, so the other half still shows as a change to sync.
 */
export async function mergeItem(ctx: ApplyContext, item: PlanItem, codec: Codec): Promise<ItemResult> {
  const merge = ctx.merges.get(item.path)
  if (!merge) return { status: 'conflict', reason: 'changed on both sides' }
  const planned = ctx.local.get(item.path)
  const before = merge.before.local.hash
  if (!planned || planned.hash !== before || !(await localAsPlanned(ctx, item, codec))) return changedLocally
  const toServer = ctx.mergeWrites !== 'local' && merge.remote.hash !== merge.before.remote.hash
  let stored: { object: JsonObject; bytes: FileBytes } | undefined
  if (toServer) {
    const written = await writeMergeToServer(ctx, item, codec, merge.remote)
    if ('status' in written) return written
    stored = written
  }
  // What the server made of the merge (it may normalise), when it was written there, is what
  // the file gets.
  const fileText = stored && merge.settled && ctx.mergeWrites === 'both' ? stored.bytes : merge.local
  let vouch: Vouch = { read: planned.stat }
  if (ctx.mergeWrites !== 'remote' && fileText.hash !== merge.before.local.hash) {
    if (await localAsPlanned(ctx, item, codec)) {
      vouch = { written: await ctx.writer.write(item.path, fileText.text, fileText.hash) }
    } else if (!stored) {
      return changedLocally
    } else {
      // Edited while the server was written: the new edit shows as a local change next time.
      vouch = 'none'
    }
  }
  if (!merge.settled) {
    // Leaves remain in conflict: the base stays, and the settled leaves now agree on both sides.
    const left = item.leaves?.length ?? 0
    return { status: 'conflict', reason: `${left} ${left === 1 ? 'leaf' : 'leaves'} still differ` }
  }
  const entry = ctx.remote.get(item.path)!
  if (ctx.mergeWrites === 'both') {
    const bytes = stored?.bytes ?? merge.local
    await commit(
      ctx,
      item,
      bytes,
      stored?.object ?? entry.object,
      codec,
      vouch,
      false,
      stored ? undefined : entry.rev,
    )
  } else if (ctx.mergeWrites === 'local') {
    // The file holds the merge; the base is the server copy, so the local edits are still to push.
    await commit(ctx, item, merge.before.remote, entry.object, codec, 'none', entry.inherited, entry.rev)
  } else {
    // The server holds the merge; the base is the file, and no revision matches the server copy,
    // so the next listing reads it and the server's edits are still to pull.
    await commit(ctx, item, merge.before.local, stored?.object ?? entry.object, codec, vouch, false, '')
  }
  // The server's side may have put back leaves of our own push (an editor's stale save, met by a
  // local edit of other leaves): told as for a pull once the file holds the merge.
  return ctx.mergeWrites === 'remote' ? applied : revertCheck(ctx, item, entry.object, codec)
}

async function writeMergeToServer(
  ctx: ApplyContext,
  item: PlanItem,
  codec: Codec,
  side: SideText,
): Promise<{ object: JsonObject; bytes: FileBytes } | ItemResult> {
  const problems = codec.checkReferences(side.file, ctx.references)
  if (problems.length > 0)
    return { status: 'failed', error: `the merge of both sides: ${problems.join('; ')}` }
  const remote = await remoteAsPlanned(ctx, item, codec)
  if (!remote.ok || !remote.current) return changedRemotely
  await ctx.writer.keepRemoteInTrash(item.path, fileBytes(codec.toFile(remote.current)).text)
  if (ctx.remote.get(item.path)?.inherited) await ctx.client.pullInherited(item.kind, item.id)
  const body = codec.toBody(side.file, {
    current: remote.current,
    baseCreateDate: ctx.store.get(item.path)?.createDate,
    now: ctx.now(),
    ...(item.keepServerSecrets ? { keepServerSecrets: true } : {}),
  })
  const object = await ctx.client.put(item.kind, item.id, body, {
    expected: (current) => (current ? codec.revisionOf(current) : undefined) === remote.rev,
  })
  ctx.onServerWrite?.(item.path, body, object)
  return { object, bytes: fileBytes(codec.fromWriteAnswer(object, side.file)) }
}
