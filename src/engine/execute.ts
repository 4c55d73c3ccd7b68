// The executor: carries out the selected plan entries in a safe order and reports a result per
// item ({applied, conflicts, failed}, after rclone's bisync Results). A failed item never stops
// the others; only its own change is left undone.
//
// Order, and why:
//  1. pushes, per kind in codec order (schemas before the content that uses them), parents
//     before children, because the server checks a content's parent on every write;
//  2. local-only changes (pull, delete-local, base merges), which need no order;
//  3. remote deletes, kinds in reverse and children before parents, so nothing is re-parented
//     by the server on its way out.
// Each of these is a series of stages (one per kind and tree depth for 1 and 3, one for 2): the
// items of a stage do not depend on each other, so they run several at a time, while the
// stages run one after the other. The client's queue still holds requests to the rate limit;
// running items side by side only stops one item's round trips and file writes from waiting
// on another's. Reports come out in the same order as if the items had run one by one.

import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { itemLogger } from '../log/item-lines.js'
import { RemoteError } from '../remote/errors.js'
import type { ItemState } from '../state/state-file.js'
import { inParallel } from '../util/in-parallel.js'
import type { Codec } from '../workspace/codec.js'
import { diskFull } from '../workspace/disk-full.js'
import { type ParsedFile, readLocalFile, statLocalFile } from '../workspace/local-file.js'
import {
  type ApplyContext,
  adoptServerOrder,
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
import { levelsChildrenFirst, levelsParentsFirst } from './order.js'
import { type Outcome, reportOf } from './outcome.js'
import type { PlanItem } from './plan.js'

function codeOf(error: unknown): { code?: string } {
  return error instanceof RemoteError ? { code: error.code } : {}
}

type Prepared = { parsed: ParsedFile; stat: ItemState['stat'] }

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
function pushIntents(ctx: ApplyContext, pushes: PlanItem[], prepared: Map<string, Prepared>) {
  const intents: { path: string; hash: string }[] = []
  for (const item of pushes) {
    const parsed = prepared.get(item.path)?.parsed
    // A version-1 base's file is sent in the server's order: its hash is not the file's.
    if (parsed?.ok && !ctx.store.get(item.path)?.sortedBase)
      intents.push({ path: item.path, hash: parsed.hash })
  }
  return intents
}

/** Items carried out at the same time within one stage. */
const STAGE_PARALLELISM = 8
/** Items between two turns of the event loop (see execute). */
const YIELD_EVERY = 16

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

export async function execute(
  ctx: ApplyContext,
  planned: readonly PlanItem[],
  codecs: readonly Codec[],
  onProgress: (done: number, total: number, item: PlanItem) => void = () => {},
  signal?: AbortSignal,
): Promise<Outcome> {
  // An unchanged item whose stat cache is current needs nothing: most of a full run over a
  // quiet workspace (watch's poll), which need not queue 10,000 empty steps. One whose base a
  // version-1 state recorded gets its file in the server's key order, once.
  const selected = planned.filter(
    (item) => item.action !== 'none' || statCacheStale(ctx, item) || sortedBase(ctx, item),
  )
  const pushes = selected.filter((item) => item.action === 'push')
  const prepared = await preparePushes(ctx, pushes, codecs)
  // On disk before the first byte goes: a kill after the server's answer, before the state's
  // save, leaves the next run knowing the server holds our push (landed-pushes.ts).
  await ctx.store.pushes?.record(pushIntents(ctx, pushes, prepared))
  const localOnly = selected.filter((item) => !['push', 'delete-remote'].includes(item.action))
  const stages = [
    ...pushStages(pushes, prepared, codecs),
    ...(localOnly.length > 0 ? [localOnly] : []),
    ...remoteDeleteStages(
      ctx,
      selected.filter((item) => item.action === 'delete-remote'),
      codecs,
    ),
  ]
  let done = 0
  let sinceYield = 0
  const total = stages.flat().filter((item) => item.action !== 'none').length
  const results: Array<ItemResult | undefined>[] = stages.map(() => [])
  // Without a valid token, or with a full disk, every further item would fail the same way:
  // stop and say so.
  let stop: Error | undefined
  // Asked to stop (watch shutdown): leave the rest; their state is untouched, so the next run
  // finds them again.
  const stopped = () => signal?.aborted === true || stop !== undefined
  for (const [s, stage] of stages.entries()) {
    if (stopped()) break
    await inParallel(
      stage,
      STAGE_PARALLELISM,
      async (item, index) => {
        let result: ItemResult | undefined
        if (
          item.kind === 'schema' &&
          item.action === 'delete-remote' &&
          contentWriteFailed(stages, results, s)
        ) {
          // The run planned this delete knowing which content it moves or deletes first
          // (guards.ts deletesHeldBySchemaUse); when some of that failed, the schema may still be
          // in use, and a delete would leave that content pointing at nothing.
          results[s]![index] = {
            status: 'failed',
            error:
              'not deleted on the server: content this run should have pushed or deleted first failed (see above), so the schema may still be in use; run again once that content is through',
          }
          return
        }
        try {
          result = await resultOf(() => applyOne(ctx, item, codecOf(codecs, item), prepared))
        } catch (error) {
          stop ??= error as Error
          return
        }
        results[s]![index] = result
        logResult(ctx.logger, item, result)
        if (item.action !== 'none') onProgress(++done, total, item)
        // Steps that settle at once (merge-base, no-ops, state-only records) await nothing but
        // settled promises: without a turn of the event loop now and then, media downloads,
        // sockets and the watcher's events would wait for the whole stage.
        if (++sinceYield >= YIELD_EVERY) {
          sinceYield = 0
          await yieldToLoop()
        }
      },
      stopped,
    )
  }
  if (stop) throw stop
  return outcomeOf(stages, results)
}

/** Whether a content push or remote delete in a stage before `upTo` did not go through. */
function contentWriteFailed(
  stages: PlanItem[][],
  results: Array<ItemResult | undefined>[],
  upTo: number,
): boolean {
  for (let s = 0; s < upTo; s++) {
    for (const [index, item] of stages[s]!.entries()) {
      if (item.kind !== 'content' || (item.action !== 'push' && item.action !== 'delete-remote')) continue
      const status = results[s]![index]?.status
      if (status === 'failed' || status === 'conflict') return true
    }
  }
  return false
}

/** The reports in stage order, as if every item had run one after the other. */
function outcomeOf(stages: PlanItem[][], results: Array<ItemResult | undefined>[]): Outcome {
  const outcome: Outcome = { applied: [], conflicts: [], failed: [] }
  for (const [s, stage] of stages.entries()) {
    for (const [index, item] of stage.entries()) fileResult(outcome, item, results[s]![index])
  }
  return outcome
}

/**
 * Runs one item's step and says what happened. A failed item never stops the others, so its
 * error becomes its result; only a refused token and a full disk are thrown, since every
 * further item would fail the same way.
 */
async function resultOf(step: () => Promise<ItemResult | undefined>): Promise<ItemResult | undefined> {
  try {
    return await step()
  } catch (error) {
    if (error instanceof RemoteError && error.code === 'unauthorized') throw error
    const full = diskFull(error)
    if (full) throw full
    return error instanceof RemoteError && error.code === 'conflict'
      ? { status: 'conflict', reason: 'the server copy changed while it was being written' }
      : { status: 'failed', error: (error as Error).message, ...codeOf(error) }
  }
}

function logResult(logger: ApplyContext['logger'], item: PlanItem, result: ItemResult | undefined): void {
  if (result?.status === 'applied')
    itemLogger(logger).info({ path: item.path, action: item.action }, 'applied')
  if (result?.status === 'failed')
    itemLogger(logger).error({ path: item.path, action: item.action, error: result.error }, 'item failed')
}

function fileResult(outcome: Outcome, item: PlanItem, result: ItemResult | undefined): void {
  if (result?.status === 'applied' && item.action !== 'merge-base') outcome.applied.push(reportOf(item))
  if (result?.status === 'conflict') {
    const why = result.reason ? { reason: result.reason } : {}
    outcome.conflicts.push(reportOf(item, { action: 'conflict', ...why }))
  }
  if (result?.status === 'failed') {
    outcome.failed.push(
      reportOf(item, { error: result.error, ...(result.code ? { code: result.code } : {}) }),
    )
  }
}

/** One item's step, run on its own and filed into the outcome (the media executor's unit). */
export async function runStep(
  logger: ApplyContext['logger'],
  outcome: Outcome,
  item: PlanItem,
  step: () => Promise<ItemResult | undefined>,
): Promise<void> {
  const result = await resultOf(step)
  logResult(logger, item, result)
  fileResult(outcome, item, result)
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
      return sortedBase(ctx, item) ? adoptServerOrder(ctx, item, codec) : mergeBaseItem(ctx, item)
    case 'merge':
      return mergeItem(ctx, item, codec)
    case 'conflict':
      await recordConflict(ctx, item, codec)
      return { status: 'conflict' }
    case 'none': {
      if (!sortedBase(ctx, item)) {
        await refreshStatCache(ctx, item)
        return undefined
      }
      // A reformat, not a change: reported only if it failed (a file edited meanwhile waits for the next run).
      const result = await adoptServerOrder(ctx, item, codec)
      return result.status === 'failed' ? result : undefined
    }
  }
}

/** The item's base was recorded by a version-1 state (ItemState.sortedBase). */
function sortedBase(ctx: ApplyContext, item: PlanItem): boolean {
  return ctx.store.get(item.path)?.sortedBase === true
}
