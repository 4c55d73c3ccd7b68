// `promote`: send items up to the parent project the server inherits from (`P/<kind>/push/:id`).
// The server pushes what IT holds, so an item is promoted only when the workspace and the
// server agree on it: an unsynced local edit or a conflict is refused (push or resolve first)
// rather than pushed implicitly, so promote never writes this project as a side effect and
// the parent gets exactly what `status` called clean. Afterwards the server's listing must
// flag the item `sync.hasRemote`: upstream answers 200 to a push even when it did nothing.

import { isBytes } from '../workspace/kinds.js'
import type { PlanItem } from './plan.js'
import { inScope, type PlannedRun } from './plan-apply-types.js'

export interface PromoteReport {
  kind: PlanItem['kind']
  id: string
  path: string
  action: 'promote'
  error?: string
}

export interface PromoteOutcome {
  applied: PromoteReport[]
  conflicts: PromoteReport[]
  failed: PromoteReport[]
}

/** The kinds the server's Sync feature shares item by item (media is refused before). */
export type SharedKind = Exclude<PlanItem['kind'], 'media'>

export interface PromotePort {
  pushToParent(kind: SharedKind, id: string): Promise<void>
  list(kind: SharedKind): Promise<Array<Record<string, unknown>>>
}

const report = (item: PlanItem, error?: string): PromoteReport => ({
  kind: item.kind,
  id: item.id,
  path: item.path,
  action: 'promote',
  ...(error ? { error } : {}),
})

/** Why an item cannot be promoted as it stands, or undefined when it can. */
export function refusal(item: PlanItem): string | undefined {
  if (isBytes(item.kind)) return `${item.kind} has no push route on the server; only its tree is shared`
  if (item.inherited) return 'already inherited from the parent project; nothing to send up'
  if (item.action === 'conflict')
    return 'in conflict; settle it with `cms-sync resolve` and push, then promote'
  if (item.action !== 'none' && item.action !== 'merge-base')
    return `has unsynced changes (local ${item.local}, remote ${item.remote}); run \`cms-sync push\` or \`cms-sync sync\` first, so the parent gets what this project holds`
  return undefined
}

/**
 * The plan items the paths name; empty when none. Inherited items inside a named folder are
 * left out (promoting `content/` means this project's own items); one named as a file is kept,
 * so the refusal says why.
 */
export function promoteSelection(run: PlannedRun, scope: readonly string[]): PlanItem[] {
  return run.plan.items.filter(
    (item) =>
      inScope(item.path, scope) &&
      (!item.inherited || scope.includes(item.path)) &&
      // A deployment still owed is this project's site, not content to send up.
      item.action !== 'publish' &&
      item.action !== 'unpublish',
  )
}

function flaggedOnParent(object: Record<string, unknown> | undefined): boolean {
  const sync = object?.sync
  return typeof sync === 'object' && sync !== null && (sync as Record<string, unknown>).hasRemote === true
}

export async function promote(
  port: PromotePort,
  items: readonly PlanItem[],
  opts: { dryRun: boolean; noParent?: string },
): Promise<PromoteOutcome> {
  const outcome: PromoteOutcome = { applied: [], conflicts: [], failed: [] }
  const ready: PlanItem[] = []
  for (const item of items) {
    const why = opts.noParent ?? refusal(item)
    if (why) outcome.failed.push(report(item, why))
    else ready.push(item)
  }
  if (opts.dryRun) {
    outcome.applied.push(...ready.map((item) => report(item)))
    return outcome
  }
  const pushed: PlanItem[] = []
  await Promise.all(
    ready.map(async (item) => {
      try {
        await port.pushToParent(item.kind as SharedKind, item.id)
        pushed.push(item)
      } catch (error) {
        outcome.failed.push(report(item, (error as Error).message))
      }
    }),
  )
  for (const kind of new Set(pushed.map((item) => item.kind as SharedKind))) {
    const listed = new Map((await port.list(kind)).map((object) => [object.id, object]))
    for (const item of pushed.filter((i) => i.kind === kind)) {
      if (flaggedOnParent(listed.get(item.id))) outcome.applied.push(report(item))
      else
        outcome.failed.push(
          report(
            item,
            'the server accepted the push, but does not list the item as present on the parent; is sync still enabled in the project settings? (`cms-sync doctor`)',
          ),
        )
    }
  }
  const byPath = (a: PromoteReport, b: PromoteReport) => a.path.localeCompare(b.path)
  outcome.applied.sort(byPath)
  outcome.failed.sort(byPath)
  return outcome
}
