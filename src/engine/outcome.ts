// What a run reports per item: the status item objects of design.md ({kind, id, path, local,
// remote, action}) sorted into applied, conflicts and failed, for text and --json alike.

import type { RevertedLeaf } from '../state/recent-pushes.js'
import { FOLDER_OF } from '../workspace/kinds.js'
import type { HeldChange } from './held.js'
import type { ConflictLeaf } from './merge/merge-json.js'
import type { PlanItem } from './plan.js'
import { type ApplyOptions, inScope, type PlannedRun } from './plan-apply-types.js'
import { publishBlocked } from './publish-plan.js'

export interface ItemReport {
  kind: PlanItem['kind']
  id: string
  path: string
  local: PlanItem['local']
  remote: PlanItem['remote']
  action: PlanItem['action']
  /** failed: what went wrong. */
  error?: string
  /** failed on the server: the client's error code (server, network, rate-limited, rejected, ...). */
  code?: string
  /** A conflict found while running (not in the plan): why the change was not applied. */
  reason?: string
  /** Deleted on the server: where its server copy was kept first (in .cms-sync/trash/). */
  kept?: string
  /** Media moved or renamed: the path it had before. */
  from?: string
  /** The server's copy is inherited from its parent project (additive to design.md's shape). */
  inherited?: true
  /** A conflict of an item changed on both sides: each leaf both sides changed differently. */
  leaves?: ConflictLeaf[]
  /** publish / unpublish: the connection it goes through (null: none is named). */
  connection?: string | null
  /** publish / unpublish: the parent whose settings.publishing has applyToChildren and decides the connection. */
  governedBy?: string
  /** A pull that put leaves back to their values before our own recent push ("reverted on the server"). */
  reverted?: RevertedLeaf[]
  /** Where the version this run replaced was kept (workspace-relative), when the report names it. */
  trash?: string
}

export interface Outcome {
  applied: ItemReport[]
  conflicts: ItemReport[]
  failed: ItemReport[]
  /** What guards held instead of stopping the run (ApplyOptions.holdGuarded). */
  held?: HeldChange[]
  /** Asked to stop (Ctrl-C) before every selected item ran: how many were left untouched. */
  interrupted?: { left: number }
}

export function reportOf(item: PlanItem, extra: Partial<ItemReport> = {}): ItemReport {
  return {
    kind: item.kind,
    id: item.id,
    path: item.path,
    local: item.local,
    remote: item.remote,
    action: item.action,
    ...(item.from ? { from: item.from } : {}),
    ...(item.inherited ? { inherited: true as const } : {}),
    ...(item.leaves?.length ? { leaves: item.leaves } : {}),
    ...(item.reason ? { reason: item.reason } : {}),
    ...(item.publishing ? { connection: item.publishing.connection } : {}),
    ...(item.publishing?.governedBy ? { governedBy: item.publishing.governedBy } : {}),
    ...extra,
  }
}

/** What a run would do: the selected entries as if applied, and those it would refuse as failed. */
export function dryRunOutcome(
  selected: readonly PlanItem[],
  /** predictFailures: path -> why the run would refuse it. */
  failures: ReadonlyMap<string, string>,
): Outcome {
  const outcome: Outcome = { applied: [], conflicts: [], failed: [] }
  for (const item of selected) {
    const error = failures.get(item.path) ?? publishBlocked(item)
    if (error !== undefined) outcome.failed.push(reportOf(item, { error }))
    else if (item.action === 'conflict') outcome.conflicts.push(reportOf(item))
    else if (item.action !== 'none' && item.action !== 'merge-base') outcome.applied.push(reportOf(item))
  }
  return outcome
}

/** Files that stand for no item and server items no file can hold, as failed entries. */
export function problemReports(
  run: PlannedRun,
  opts: Pick<ApplyOptions, 'scope' | 'reportScanProblems' | 'reportRemoteProblems'>,
): ItemReport[] {
  const reports: ItemReport[] = []
  // Paths left alone (not synced) are told by every command: nothing else says why they stay.
  for (const p of run.scanProblems.filter((p) => inScope(p.path, opts.scope))) {
    if (opts.reportScanProblems || p.unsynced) {
      reports.push({
        kind: p.kind,
        id: '',
        path: p.path,
        local: 'added',
        remote: 'unchanged',
        action: 'push',
        error: p.problems.join('; '),
      })
    }
  }
  for (const p of run.remoteProblems) {
    if (
      (opts.reportRemoteProblems && opts.scope.length === 0) ||
      (p.unsynced && inScope(p.unsynced, opts.scope))
    ) {
      reports.push({
        kind: p.kind,
        id: p.id,
        // Every failure row names a path: the item's, or its kind's folder for an id no file can hold.
        path: p.unsynced ?? p.path ?? `${FOLDER_OF[p.kind]}/`,
        local: 'unchanged',
        remote: 'added',
        action: 'pull',
        error: p.problem,
      })
    }
  }
  return reports
}
