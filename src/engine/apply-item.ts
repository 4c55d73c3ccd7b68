// Carrying out one plan entry. Each action checks, just before it acts, that the side it is
// about to overwrite is still what the plan saw (Mutagen's ensureExpectedFile): a remote edit
// made since the listing, or a local edit made since the scan, turns into a conflict instead of
// being overwritten. State for the item is committed only after the change is done.

import type { ItemState, StateStore, StatSnapshot } from '../state/state-file.js'
import { FileAppearedError } from '../workspace/atomic-write.js'
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
}

export type ItemResult =
  | { status: 'applied' }
  | { status: 'conflict'; reason?: string }
  | { status: 'failed'; error: string; code?: string }

const applied: ItemResult = { status: 'applied' }
const changedLocally: ItemResult = { status: 'conflict', reason: 'the file changed during the run' }
const changedRemotely: ItemResult = {
  status: 'conflict',
  reason: 'the server copy changed since it was listed',
}

async function localAsPlanned(ctx: ApplyContext, item: PlanItem, codec: Codec): Promise<boolean> {
  const planned = ctx.local.get(item.path)
  const now = await statLocalFile(ctx.root, item.path)
  if (!planned || !now) return !planned && !now
  if (sameStat(planned.stat, now)) return true
  return (await readLocalFile(ctx.root, item.path, codec, item.id))?.hash === planned.hash
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

async function commit(
  ctx: ApplyContext,
  item: PlanItem,
  bytes: FileBytes,
  stored: JsonObject,
  codec: Codec,
  vouch: Vouch,
  /** Still inherited after this step: a pull of a listed inherited item; never after our write. */
  inheritedAfter = false,
) {
  const stat = await vouchedStat(ctx, item, vouch)
  await ctx.store.commit({
    kind: item.kind,
    id: item.id,
    path: item.path,
    baseHash: bytes.hash,
    remoteRev: codec.revisionOf(stored),
    ...(stat ? { stat } : {}),
    ...('createDate' in stored ? { createDate: (stored.createDate as string | null) ?? null } : {}),
    ...(inheritedAfter ? { inherited: true as const } : {}),
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
  if (parsed.hash !== ctx.local.get(item.path)?.hash) return changedLocally
  if (!parsed.ok) return { status: 'failed', error: parsed.problems.join('; ') }
  const problems = codec.checkReferences(parsed.file, ctx.references)
  if (problems.length > 0) return { status: 'failed', error: problems.join('; ') }
  if (!(await localAsPlanned(ctx, item, codec))) return changedLocally
  const remote = await remoteAsPlanned(ctx, item, codec)
  if (!remote.ok) return changedRemotely
  if (item.settledFor === 'local' && remote.current) {
    await ctx.writer.keepRemoteInTrash(item.path, fileBytes(codec.toFile(remote.current)).text)
  }
  // The server holds only its parent's locked copy: it makes its own local copy first (which
  // equals what we planned against), so the write below edits that copy, never the parent's.
  if (ctx.remote.get(item.path)?.inherited && remote.current)
    await ctx.client.pullInherited(item.kind, item.id)
  const body = codec.toBody(parsed.file, {
    current: remote.current,
    baseCreateDate: ctx.store.get(item.path)?.createDate,
    now: ctx.now(),
  })
  const stored = await ctx.client.put(item.kind, item.id, body, {
    expected: (current) => (current ? codec.revisionOf(current) : undefined) === remote.rev,
  })
  const storedBytes = fileBytes(codec.fromWriteAnswer(stored, parsed.file))
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
  await commit(ctx, item, bytes, object, codec, { written }, entry.inherited)
  return applied
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
  const remote = await remoteAsPlanned(ctx, item, codec)
  if (!remote.ok) return changedRemotely
  if (remote.current && item.settledFor === 'local') {
    await ctx.writer.keepRemoteInTrash(item.path, fileBytes(codec.toFile(remote.current)).text)
  }
  if (remote.current && item.kind === 'form') await keepFormEntries(ctx, item)
  if (remote.current) await ctx.client.remove(item.kind, item.id)
  await ctx.store.forget(item.path)
  await clearConflictCopy(ctx, item)
  return applied
}

/**
 * A form's entries are people's data and in no file: read just before the form is deleted and
 * kept in .cms-sync/trash/<run>/forms/<id>.entries.json, so no delete loses them unseen.
 */
async function keepFormEntries(ctx: ApplyContext, item: PlanItem): Promise<void> {
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
