// The executor: carries out the selected plan entries of every kind and reports a result per
// item ({applied, conflicts, failed}, after rclone's bisync Results). A failed item never stops
// the others; only its own change is left undone.
//
// Each family of kinds (the JSON kinds: json-apply.ts; media: media/media-apply.ts) brings its
// own order as a series of stages, and its own step for one item. The items of a stage do not
// depend on each other, so they run several at a time, while the stages run one after the
// other. The client's queue still holds requests to the rate limit; running items side by side
// only stops one item's round trips and file writes from waiting on another's. Reports come
// out in the same order as if the items had run one by one, family after family.

import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { itemLogger } from '../log/item-lines.js'
import { RemoteError } from '../remote/errors.js'
import type { PushIntent } from '../state/push-journal.js'
import type { StateStore } from '../state/state-file.js'
import { inParallel } from '../util/in-parallel.js'
import { diskFull } from '../workspace/disk-full.js'
import type { Kind } from '../workspace/kinds.js'
import type { ItemResult } from './apply-item.js'
import { type Outcome, reportOf } from './outcome.js'
import type { PlanItem } from './plan.js'
import type { EngineLogger } from './remote-port.js'

/** Items that do not depend on each other, and how many of them may run at once. */
export interface Stage {
  items: readonly PlanItem[]
  parallelism: number
}

/** What a family of kinds brings to the executor. */
export interface Family {
  stages: Stage[]
  /** What its pushes will leave on the server, recorded before the first byte goes. */
  pushes: readonly PushIntent[]
  /** Carries out one item; undefined: nothing to report. */
  step(item: PlanItem): Promise<ItemResult | undefined>
  /** Runs once its stages are over, also when the run stopped. */
  finish?(): Promise<void>
}

export interface ExecuteOptions {
  store: StateStore
  logger: EngineLogger
  /** Families run at the same time (a run that only writes the workspace), else in turn. */
  sideBySide: boolean
  onProgress?: ((done: number, total: number, item: PlanItem) => void) | undefined
  signal?: AbortSignal | undefined
  /** The kinds whose items name items of `kind` (codec.ts usersOf: content names its schema). */
  usersOf?: (kind: Kind) => readonly Kind[]
}

/** Items between two turns of the event loop (see execute). */
const YIELD_EVERY = 16

export async function execute(families: readonly Family[], opts: ExecuteOptions): Promise<Outcome> {
  const total = families
    .flatMap((family) => family.stages.flatMap((stage) => stage.items))
    .filter((item) => item.action !== 'none').length
  let done = 0
  let sinceYield = 0
  const results = new Map<PlanItem, ItemResult>()
  // The pushes and remote deletes of items that name others (content) all run before the remote
  // deletes of what they name (schemas, json-apply.ts): the kinds of which one failed.
  const writeFailed = new Set<Kind>()
  // Without a valid token, or with a full disk, every further item would fail the same way:
  // stop and say so.
  let stop: Error | undefined
  // Asked to stop (watch shutdown): leave the rest; their state is untouched, so the next run
  // finds them again.
  const stopped = () => opts.signal?.aborted === true || stop !== undefined

  const runItem = async (family: Family, item: PlanItem) => {
    let result: ItemResult | undefined
    const failedUser =
      item.action === 'delete-remote'
        ? opts.usersOf?.(item.kind).find((kind) => writeFailed.has(kind))
        : undefined
    if (failedUser !== undefined) {
      // The run planned this delete knowing which of the items naming it it moves or deletes
      // first (guards.ts deletesHeldByUse); when some of that failed, the item may still be in
      // use, and a delete would leave those items pointing at nothing.
      result = {
        status: 'failed',
        error: `not deleted on the server: ${failedUser} this run should have pushed or deleted first failed (see above), so the ${item.kind} may still be in use; run again once that ${failedUser} is through`,
      }
    } else {
      try {
        result = await resultOf(() => family.step(item))
      } catch (error) {
        stop ??= error as Error
        return
      }
      logResult(opts.logger, item, result)
      if (item.action !== 'none') opts.onProgress?.(++done, total, item)
    }
    if (result) results.set(item, result)
    if (
      ['push', 'delete-remote'].includes(item.action) &&
      (result?.status === 'failed' || result?.status === 'conflict')
    )
      writeFailed.add(item.kind)
    // Steps that settle at once (merge-base, no-ops, state-only records) await nothing but
    // settled promises: without a turn of the event loop now and then, media downloads,
    // sockets and the watcher's events would wait for the whole stage.
    if (++sinceYield >= YIELD_EVERY) {
      sinceYield = 0
      await yieldToLoop()
    }
  }

  const runFamily = async (family: Family) => {
    try {
      await opts.store.pushes?.record(family.pushes)
      for (const stage of family.stages) {
        if (stopped()) break
        await inParallel(stage.items, stage.parallelism, (item) => runItem(family, item), stopped)
      }
    } finally {
      await family.finish?.()
    }
  }

  if (opts.sideBySide) {
    const settled = await Promise.allSettled(families.map(runFamily))
    for (const family of settled) if (family.status === 'rejected') throw family.reason
  } else {
    for (const family of families) if (!stop) await runFamily(family)
  }
  if (stop) throw stop
  // The reports in family and stage order, as if every item had run one after the other.
  const outcome: Outcome = { applied: [], conflicts: [], failed: [] }
  if (opts.signal?.aborted) {
    // What the stop left: items that had something to do and never ran (their state is untouched).
    // A stop that came while the last item was in flight left nothing: the run is whole.
    const left = families
      .flatMap((family) => family.stages.flatMap((stage) => stage.items))
      .filter((item) => item.action !== 'none' && item.action !== 'merge-base' && !results.has(item)).length
    if (left > 0) outcome.interrupted = { left }
  }
  for (const item of families.flatMap((family) => family.stages.flatMap((stage) => stage.items))) {
    const result = results.get(item)
    if (result?.status === 'applied' && item.action !== 'merge-base')
      outcome.applied.push(
        reportOf(item, {
          ...(result.kept ? { kept: result.kept } : {}),
          ...(result.reverted
            ? { reverted: result.reverted, ...(result.trash ? { trash: result.trash } : {}) }
            : {}),
        }),
      )
    if (result?.status === 'conflict') {
      const why = result.reason ? { reason: result.reason } : {}
      outcome.conflicts.push(reportOf(item, { action: 'conflict', ...why }))
    }
    if (result?.status === 'failed') {
      const code = result.code ? { code: result.code } : {}
      outcome.failed.push(reportOf(item, { error: result.error, ...code }))
    }
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
    if (!(error instanceof RemoteError)) return { status: 'failed', error: (error as Error).message }
    return error.code === 'conflict'
      ? { status: 'conflict', reason: 'the server copy changed while it was being written' }
      : { status: 'failed', error: error.message, code: error.code }
  }
}

function logResult(logger: EngineLogger, item: PlanItem, result: ItemResult | undefined): void {
  if (result?.status === 'applied')
    itemLogger(logger).info(
      { path: item.path, action: item.action, ...(result.kept ? { kept: result.kept } : {}) },
      'applied',
    )
  if (result?.status === 'failed')
    itemLogger(logger).error({ path: item.path, action: item.action, error: result.error }, 'item failed')
}
