// One run of the engine, shared by every command: read the three sides, plan, check the
// guards, then carry out the actions the command selects. status and diff stop after the
// plan; pull, push, sync and resolve differ only in the actions they select.

import { CliError, ExitCode } from '../cli/exit-codes.js'
import { NATIVE_SCHEMA_IDS } from '../remote/dialect.js'
import { emptyState, loadState, StateStore, sameTarget, type Target } from '../state/state-file.js'
import type { Codec } from '../workspace/codec.js'
import { loadIgnoreRules } from '../workspace/ignore-rules.js'
import { type BeforeLocalWrite, LocalWriter } from '../workspace/local-writes.js'
import { type LocalEntry, type ScanProblem, scanWorkspace } from '../workspace/scan.js'
import { execute } from './execute.js'
import {
  deleteGuard,
  deletesHeldByRenamedFiles,
  describeStop,
  type GuardResult,
  inheritanceGuard,
  listingGuard,
  targetGuard,
} from './guards.js'
import { dryRunOutcome, type Outcome, problemReports, reportOf } from './outcome.js'
import { type Plan, type PlanItem, plan, type Side, type Version } from './plan.js'
import type { EngineLogger, RemotePort } from './remote-port.js'
import {
  ListingFailedError,
  type RemoteEntry,
  type RemoteSnapshot,
  snapshotRemote,
} from './remote-snapshot.js'

export interface EngineDeps {
  root: string
  target: Target
  client: RemotePort
  logger: EngineLogger
  codecs: readonly Codec[]
  maxDeletePercent: number
  /** Called before each workspace file the run writes or deletes (the watcher skips its echo). */
  beforeLocalWrite?: BeforeLocalWrite
}

export interface PlannedRun {
  store: StateStore
  plan: Plan
  local: Map<string, LocalEntry>
  remote: Map<string, RemoteEntry>
  scanProblems: ScanProblem[]
  remoteProblems: RemoteSnapshot['problems']
  /** True when --rebind dropped a base bound to another target. */
  rebound: boolean
}

/** Exit 4: a guard stopped the run before anything changed. */
export class SafetyStopError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.safetyStop)
  }
}

function stopUnlessOk(result: GuardResult): void {
  if (!result.ok) throw new SafetyStopError(describeStop(result))
}

export async function planRun(
  deps: EngineDeps,
  /** rehash: read every file instead of trusting the stat cache (watch's periodic deep rescan). */
  opts: { prefer?: Side; rebind?: boolean; rehash?: boolean },
): Promise<PlannedRun> {
  const saved = await loadState(deps.root)
  stopUnlessOk(targetGuard(saved?.target, deps.target, opts.rebind ?? false))
  // A new target makes the old base meaningless: start over as a fresh clone, which never deletes.
  const rebound = !!saved && !sameTarget(saved.target, deps.target)
  const store = new StateStore(deps.root, saved && !rebound ? saved : emptyState(deps.target))
  const kinds = new Set(deps.codecs.map((codec) => codec.kind))
  // .cmsyncignore'd paths are never synced either way: out of all three sides of the plan.
  const rules = await loadIgnoreRules(deps.root)
  const synced = (path: string) => !rules.ignores(path)
  const baseItems = Object.values(store.state.items).filter(
    (item) => kinds.has(item.kind) && synced(item.path),
  )
  const scan = await scanWorkspace(
    deps.root,
    deps.codecs,
    (path) => (opts.rehash ? undefined : store.get(path)),
    (path) => !synced(path),
  )
  let snapshot: RemoteSnapshot
  try {
    snapshot = await snapshotRemote(
      deps.client,
      deps.codecs,
      (path) => store.get(path),
      (path) => !synced(path),
    )
  } catch (error) {
    if (error instanceof ListingFailedError) {
      const stop = new SafetyStopError(`safety stop: ${error.message}; nothing was changed`)
      stop.cause = error
      throw stop
    }
    throw error
  }
  const base = new Map<string, Version>(
    baseItems.map((item) => [item.path, { ...item, hash: item.baseHash }]),
  )
  const local = new Map(scan.entries.map((entry) => [entry.path, entry]))
  const result = plan(base, local, snapshot.entries, opts.prefer ? { prefer: opts.prefer } : {})
  for (const item of result.items) if (snapshot.entries.get(item.path)?.inherited) item.inherited = true
  return {
    store,
    plan: result,
    local,
    remote: snapshot.entries,
    scanProblems: scan.problems,
    remoteProblems: snapshot.problems,
    rebound,
  }
}

/** Workspace-relative paths (or folders) the user named; none means everything. */
export function inScope(path: string, scope: readonly string[]): boolean {
  return (
    scope.length === 0 ||
    scope.some((p) => p === '' || p === path || path.startsWith(p.endsWith('/') ? p : `${p}/`))
  )
}

/** The plan entries each command carries out: one plan, different subsets. */
export const SELECT = {
  pull: (item: PlanItem) => ['pull', 'delete-local', 'merge-base', 'conflict', 'none'].includes(item.action),
  push: (item: PlanItem) => ['push', 'delete-remote', 'merge-base', 'conflict', 'none'].includes(item.action),
  sync: (_item: PlanItem) => true,
  /** resolve: only the conflicts that --keep just settled. */
  resolve: (item: PlanItem) => item.settledFor !== undefined,
} as const

export interface ApplyOptions {
  /** Which plan entries this command carries out (it always sees the whole plan). */
  select: (item: PlanItem) => boolean
  scope: readonly string[]
  dryRun: boolean
  allowDeletes: boolean
  /** Also report files that cannot stand for an item (commands that push). */
  reportScanProblems: boolean
  /** Also report server items that cannot be mirrored (commands that pull). */
  reportRemoteProblems: boolean
  onProgress?: (done: number, total: number, item: PlanItem) => void
  /** Stops the run between items (watch shutdown). */
  signal?: AbortSignal
  now?: () => string
}

export async function applyRun(deps: EngineDeps, run: PlannedRun, opts: ApplyOptions): Promise<Outcome> {
  const chosen = run.plan.items.filter((item) => opts.select(item) && inScope(item.path, opts.scope))
  const held = deletesHeldByRenamedFiles(chosen, run.local.values())
  const selected = chosen.filter((item) => !held.has(item.path))
  const baseItems = Object.values(run.store.state.items)
  stopUnlessOk(listingGuard(selected, baseItems, run.remote.values(), { allowDeletes: opts.allowDeletes }))
  stopUnlessOk(
    inheritanceGuard(selected, baseItems, run.remote.values(), { allowDeletes: opts.allowDeletes }),
  )
  stopUnlessOk(
    deleteGuard(selected, baseItems, {
      maxDeletePercent: deps.maxDeletePercent,
      allowDeletes: opts.allowDeletes,
    }),
  )
  const problems = [
    ...chosen
      .filter((item) => held.has(item.path))
      .map((item) => reportOf(item, { error: held.get(item.path)! })),
    ...problemReports(run, opts),
  ]
  if (opts.dryRun) {
    const planned = dryRunOutcome(run, selected)
    return { ...planned, failed: [...planned.failed, ...problems] }
  }
  if (run.rebound) await run.store.save()
  const now = opts.now ?? (() => new Date().toISOString())
  // Schema ids are known only when schemas are synced too; otherwise the check is left to the server.
  const schemaIds = deps.codecs.some((codec) => codec.kind === 'schema')
    ? new Set([
        ...NATIVE_SCHEMA_IDS,
        ...[...run.remote.values(), ...run.local.values()]
          .filter((e) => e.kind === 'schema')
          .map((e) => e.id),
      ])
    : undefined
  const ctx = {
    root: deps.root,
    client: deps.client,
    store: run.store,
    writer: new LocalWriter(deps.root, now().replace(/[:.]/g, '-'), deps.beforeLocalWrite),
    logger: deps.logger,
    now,
    schemaIds,
    local: run.local,
    remote: run.remote,
  }
  let outcome: Outcome
  try {
    outcome = await execute(ctx, selected, deps.codecs, opts.onProgress, opts.signal)
  } finally {
    await run.store.flush()
  }
  deps.logger.info(
    { applied: outcome.applied.length, conflicts: outcome.conflicts.length, failed: outcome.failed.length },
    'run finished',
  )
  return { ...outcome, failed: [...outcome.failed, ...problems] }
}
