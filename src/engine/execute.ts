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

import { RemoteError } from '../remote/errors.js'
import type { ItemState } from '../state/state-file.js'
import type { Codec } from '../workspace/codec.js'
import { type ParsedFile, readLocalFile, statLocalFile } from '../workspace/local-file.js'
import {
  type ApplyContext,
  deleteLocalItem,
  deleteRemoteItem,
  type ItemResult,
  mergeBaseItem,
  pullItem,
  pushItem,
  recordConflict,
  refreshStatCache,
} from './apply-item.js'
import { childrenFirst, parentsFirst } from './order.js'
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
  for (const item of items) {
    const stat = await statLocalFile(ctx.root, item.path)
    const parsed = await readLocalFile(ctx.root, item.path, codecOf(codecs, item), item.id)
    if (parsed) prepared.set(item.path, { parsed, stat })
  }
  return prepared
}

function orderedPushes(
  items: PlanItem[],
  prepared: Map<string, Prepared>,
  codecs: readonly Codec[],
): PlanItem[] {
  return codecs.flatMap((codec) => {
    const ofKind = items.filter((item) => item.kind === codec.kind)
    const parent = (item: PlanItem) => {
      const parsed = prepared.get(item.path)?.parsed
      return parsed?.ok ? codec.parentOf(parsed.file) : undefined
    }
    return parentsFirst(ofKind, (item) => item.id, parent)
  })
}

function orderedRemoteDeletes(ctx: ApplyContext, items: PlanItem[], codecs: readonly Codec[]): PlanItem[] {
  return [...codecs].reverse().flatMap((codec) => {
    const ofKind = items.filter((item) => item.kind === codec.kind)
    const parent = (item: PlanItem) => {
      const remote = ctx.remote.get(item.path)
      return remote ? codec.parentOf(remote.object) : undefined
    }
    return childrenFirst(ofKind, (item) => item.id, parent)
  })
}

export async function execute(
  ctx: ApplyContext,
  selected: readonly PlanItem[],
  codecs: readonly Codec[],
  onProgress: (done: number, total: number, item: PlanItem) => void = () => {},
  signal?: AbortSignal,
): Promise<Outcome> {
  const outcome: Outcome = { applied: [], conflicts: [], failed: [] }
  const pushes = selected.filter((item) => item.action === 'push')
  const prepared = await preparePushes(ctx, pushes, codecs)
  const steps = [
    ...orderedPushes(pushes, prepared, codecs),
    ...selected.filter((item) => !['push', 'delete-remote'].includes(item.action)),
    ...orderedRemoteDeletes(
      ctx,
      selected.filter((item) => item.action === 'delete-remote'),
      codecs,
    ),
  ]
  let done = 0
  const total = steps.filter((item) => item.action !== 'none').length
  for (const item of steps) {
    // Asked to stop (watch shutdown): leave the rest; their state is untouched, so the next
    // run finds them again.
    if (signal?.aborted) break
    const codec = codecOf(codecs, item)
    await runStep(ctx.logger, outcome, item, () => applyOne(ctx, item, codec, prepared))
    if (item.action !== 'none') onProgress(++done, total, item)
  }
  return outcome
}

/**
 * Runs one item's step and files its result into the outcome. A failed item never stops the
 * others, except a refused token: every further item would fail the same way.
 */
export async function runStep(
  logger: ApplyContext['logger'],
  outcome: Outcome,
  item: PlanItem,
  step: () => Promise<ItemResult | undefined>,
): Promise<void> {
  let result: ItemResult | undefined
  try {
    result = await step()
  } catch (error) {
    if (error instanceof RemoteError && error.code === 'unauthorized') throw error
    result =
      error instanceof RemoteError && error.code === 'conflict'
        ? { status: 'conflict', reason: 'the server copy changed while it was being written' }
        : { status: 'failed', error: (error as Error).message, ...codeOf(error) }
  }
  if (result?.status === 'applied' && item.action !== 'merge-base') outcome.applied.push(reportOf(item))
  if (result?.status === 'conflict') {
    const why = result.reason ? { reason: result.reason } : {}
    outcome.conflicts.push(reportOf(item, { action: 'conflict', ...why }))
  }
  if (result?.status === 'applied') logger.info({ path: item.path, action: item.action }, 'applied')
  if (result?.status === 'failed') {
    logger.error({ path: item.path, action: item.action, error: result.error }, 'item failed')
    outcome.failed.push(
      reportOf(item, { error: result.error, ...(result.code ? { code: result.code } : {}) }),
    )
  }
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
    case 'conflict':
      await recordConflict(ctx, item, codec)
      return { status: 'conflict' }
    case 'none':
      await refreshStatCache(ctx, item)
      return undefined
  }
}
