// The JSON kinds as a family of the executor (execute.ts): their stages, and the step for one
// item (the steps themselves are in apply-item.ts).
//
// Order, and why:
//  1. pushes, per kind in codec order (schemas before the content that uses them), parents
//     before children, because the server checks a content's parent on every write;
//  2. local-only changes (pull, delete-local, base merges), which need no order;
//  3. publishes and unpublishes, after the write they follow (the server deploys the body it
//     is given, so the content must be written first) and before the remote deletes they
//     precede (a deleted item could no longer be unpublished);
//  4. remote deletes, kinds in reverse and children before parents, so nothing is re-parented
//     by the server on its way out.
// One stage per kind and tree depth for 1 and 4, one each for 2 and 3.

import type { ItemState } from '../state/state-file.js'
import { inParallel } from '../util/in-parallel.js'
import { type Codec, fileBytes, type JsonObject } from '../workspace/codec.js'
import { type ParsedFile, readLocalFile, statLocalFile } from '../workspace/local-file.js'
import {
  type ApplyContext,
  deleteLocalItem,
  deleteRemoteItem,
  type ItemResult,
  mergeBaseItem,
  mergeItem,
  pullItem,
  pushItem,
  recordConflict,
  refreshStatCache,
  statCacheStale,
} from './apply-item.js'
import type { Family } from './execute.js'
import { levelsChildrenFirst, levelsParentsFirst } from './order.js'
import type { PlanItem } from './plan.js'
import { publishItem } from './publish-item.js'

/** Items carried out at the same time within one stage. */
const STAGE_PARALLELISM = 8

type Prepared = { parsed: ParsedFile; stat: ItemState['stat'] }

export async function jsonFamily(
  ctx: ApplyContext,
  planned: readonly PlanItem[],
  codecs: readonly Codec[],
): Promise<Family> {
  // An unchanged item whose stat cache is current needs nothing: most of a full run over a
  // quiet workspace (watch's poll), which need not queue 10,000 empty steps.
  const selected = planned.filter((item) => item.action !== 'none' || statCacheStale(ctx, item))
  const pushes = selected.filter((item) => item.action === 'push')
  const prepared = await preparePushes(ctx, pushes, codecs)
  const publishes = selected.filter((item) => PUBLISHING.has(item.action))
  const localOnly = selected.filter(
    (item) => !['push', 'delete-remote'].includes(item.action) && !PUBLISHING.has(item.action),
  )
  const remoteDeletes = selected.filter((item) => item.action === 'delete-remote')
  const stages = [
    ...pushStages(pushes, prepared, codecs),
    ...(localOnly.length > 0 ? [localOnly] : []),
    ...(publishes.length > 0 ? [publishes] : []),
    ...remoteDeleteStages(ctx, remoteDeletes, codecs),
  ]
  const publishing = publishingRun(ctx, selected, publishes)
  return {
    stages: stages.map((items) => ({ items, parallelism: STAGE_PARALLELISM })),
    // A kill after the server's answer, before the state's save, leaves the next run knowing
    // the server holds our push (landed-pushes.ts).
    pushes: pushIntents(ctx, pushes, prepared),
    step: (item) => {
      if (PUBLISHING.has(item.action)) return publishing.step(item, codecOf(codecs, item))
      if (item.action === 'delete-remote' && publishing.unpublishFailed.has(item.path))
        return Promise.resolve({ status: 'failed', error: unpublishRefusal(item, publishes) })
      return applyOne(publishing.ctx, item, codecOf(codecs, item), prepared)
    },
  }
}

/**
 * Why a delete waits for its unpublish, and what lets it go: an item no connection publishes
 * (neither its own nor a governing parent's) can never be unpublished through the CMS, so
 * "run again" would be a dead end; the delete without the unpublish is then the user's to ask.
 */
function unpublishRefusal(item: PlanItem, publishes: readonly PlanItem[]): string {
  const refused = 'not deleted on the server: it is published and its unpublish failed (see above)'
  const unpublish = publishes.find((p) => p.path === item.path && p.action === 'unpublish')
  if (unpublish?.publishing?.connection === null)
    return `${refused}; it names no connection, so the CMS has nothing to unpublish it through: to delete it without the unpublish, \`cms-sync push --no-publish ${item.path}\``
  return `${refused}, so the site would keep serving it; run again once it is unpublished`
}

const PUBLISHING = new Set<PlanItem['action']>(['publish', 'unpublish'])
/** The entries whose write a publish follows: without that write done, there is nothing to deploy. */
const WRITES = new Set<PlanItem['action']>(['push', 'merge'])

/**
 * What the publish entries need from the rest of the run: the item as each write left it on the
 * server, which writes were meant (and did not happen when absent), and which unpublishes
 * failed, so the delete they precede is held.
 */
function publishingRun(ctx: ApplyContext, selected: readonly PlanItem[], publishes: readonly PlanItem[]) {
  const written = new Map<string, JsonObject>()
  const writes = new Set(selected.filter((item) => WRITES.has(item.action)).map((item) => item.path))
  const unpublishFailed = new Set<string>()
  const deploys = new Map<string, 'publish' | 'unpublish'>()
  for (const item of publishes)
    if (ctx.local.has(item.path))
      deploys.set(item.path, item.action === 'unpublish' ? 'unpublish' : 'publish')
  // An unpublish writes the item again before its remote delete, which checks the server copy
  // is still the one planned: the copy after the unpublish is.
  const overlay = publishes.some((item) => !ctx.local.has(item.path)) ? new Map(ctx.remote) : undefined
  const ownCopies = new Map<string, string>()
  const publishCtx: ApplyContext = {
    ...ctx,
    remote: overlay ?? ctx.remote,
    ownCopies,
    deploys,
    onServerWrite: (path, sent, stored) =>
      // The server keeps the dates as schedule tasks and may echo them as null: the body's are real.
      written.set(path, {
        ...sent,
        ...stored,
        publishOn: sent.publishOn ?? null,
        unpublishOn: sent.unpublishOn ?? null,
      }),
  }
  return {
    ctx: publishCtx,
    unpublishFailed,
    async step(item: PlanItem, codec: Codec): Promise<ItemResult | undefined> {
      // The write it follows failed or stood back (reported there): the next run plans both again.
      if (writes.has(item.path) && !written.has(item.path)) return undefined
      // Held back (watch: the item's saves go on); the state still owes it, a later run does it.
      if (ctx.local.has(item.path) && ctx.deferPublish?.(item.path)) return undefined
      const result = await publishItem(publishCtx, item, codec, written.get(item.path))
      if (result?.status === 'failed' && item.action === 'unpublish') unpublishFailed.add(item.path)
      if (result?.status === 'applied' && overlay && !ctx.local.has(item.path)) {
        const entry = overlay.get(item.path)
        const now = await ctx.client.get(item.kind, item.id)
        if (entry && now) {
          overlay.set(item.path, { ...entry, rev: codec.revisionOf(now) })
          ownCopies.set(item.path, fileBytes(codec.toFile(now)).hash)
        }
      }
      return result
    },
  }
}

function codecOf(codecs: readonly Codec[], item: PlanItem): Codec {
  const codec = codecs.find((c) => c.kind === item.kind)
  if (!codec) throw new Error(`execute: no codec for ${item.kind} (${item.path})`)
  return codec
}

async function preparePushes(
  ctx: ApplyContext,
  items: PlanItem[],
  codecs: readonly Codec[],
): Promise<Map<string, Prepared>> {
  const prepared = new Map<string, Prepared>()
  await inParallel(items, STAGE_PARALLELISM, async (item) => {
    const stat = await statLocalFile(ctx.root, item.path)
    const parsed = await readLocalFile(ctx.root, item.path, codecOf(codecs, item), item.id)
    if (parsed) prepared.set(item.path, { parsed, stat })
  })
  return prepared
}

/** What the pushes will leave on the server, as far as the files tell: their canonical hashes. */
function pushIntents(_ctx: ApplyContext, pushes: PlanItem[], prepared: Map<string, Prepared>) {
  const intents: { path: string; hash: string }[] = []
  for (const item of pushes) {
    const parsed = prepared.get(item.path)?.parsed
    if (parsed?.ok) intents.push({ path: item.path, hash: parsed.hash })
  }
  return intents
}

function pushStages(
  items: PlanItem[],
  prepared: Map<string, Prepared>,
  codecs: readonly Codec[],
): PlanItem[][] {
  return codecs.flatMap((codec) => {
    const ofKind = items.filter((item) => item.kind === codec.kind)
    const parent = (item: PlanItem) => {
      const parsed = prepared.get(item.path)?.parsed
      return parsed?.ok ? codec.parentOf(parsed.file) : undefined
    }
    return levelsParentsFirst(ofKind, (item) => item.id, parent)
  })
}

function remoteDeleteStages(ctx: ApplyContext, items: PlanItem[], codecs: readonly Codec[]): PlanItem[][] {
  return [...codecs].reverse().flatMap((codec) => {
    const ofKind = items.filter((item) => item.kind === codec.kind)
    const parent = (item: PlanItem) => {
      const remote = ctx.remote.get(item.path)
      return remote ? codec.parentOf(remote.object) : undefined
    }
    return levelsChildrenFirst(ofKind, (item) => item.id, parent)
  })
}

async function applyOne(
  ctx: ApplyContext,
  item: PlanItem,
  codec: Codec,
  prepared: Map<string, Prepared>,
): Promise<ItemResult | undefined> {
  switch (item.action) {
    case 'push': {
      const ready = prepared.get(item.path)
      if (!ready) return { status: 'conflict', reason: 'the file changed during the run' }
      return pushItem(ctx, item, codec, ready)
    }
    case 'pull':
      return pullItem(ctx, item, codec)
    case 'delete-local':
      return deleteLocalItem(ctx, item, codec)
    case 'delete-remote':
      return deleteRemoteItem(ctx, item, codec)
    case 'merge-base':
      return mergeBaseItem(ctx, item)
    case 'merge':
      return mergeItem(ctx, item, codec)
    case 'conflict':
      await recordConflict(ctx, item, codec)
      return { status: 'conflict' }
    // Carried out by the family's own step (publishingRun).
    case 'publish':
    case 'unpublish':
      return undefined
    case 'none':
      await refreshStatCache(ctx, item)
      return undefined
  }
}
