// What `status` knows about a workspace, as one model: the changes of the one plan (with the
// failures a run would meet), the files and server items that cannot sync, what is inherited or
// scheduled, the watcher's pause and whether the server takes the token (status-probes.ts).
// `status` prints it (run-report.ts: as text, or as the `--json` document) and the local page
// shows it: one calculation for both.

import type { HeldChange } from '../engine/held.js'
import type { ConflictLeaf } from '../engine/merge/merge-json.js'
import type { ItemReport } from '../engine/outcome.js'
import { publishBlocked } from '../engine/publish-plan.js'
import type { RecentPushes, RevertedLeaf } from '../state/recent-pushes.js'
import type { PauseInfo } from '../watch/mass-change.js'
import type { EngineSession } from './engine-session.js'
import type { ScheduledChange } from './scheduled.js'

export type StatusChange = Pick<
  ItemReport,
  'kind' | 'id' | 'path' | 'local' | 'remote' | 'action' | 'connection' | 'governedBy' | 'reverted'
> & {
  from?: string
  inherited?: true
  problems?: string[]
  leaves?: ConflictLeaf[]
  reason?: string
  /** The run would fail on it: why. */
  error?: string
}

export interface StatusProblem {
  kind: string
  path?: string
  id?: string
  problems: string[]
}

export interface StatusRead {
  changes: StatusChange[]
  problems: StatusProblem[]
  inherited: string[]
  scheduled: ScheduledChange[]
  watchPaused: PauseInfo | undefined
  /** What watch holds (a guard's changes, the pause): the same guards over the same plan. */
  held: HeldChange[]
  tokenRefused: string | undefined
  /** Read without a token (`--anonymous`): nothing is claimed about one. */
  anonymous?: true
  /** Files in the kind folders that no run reads (a subfolder, a name without .json), and why. */
  notSynced: Array<{ path: string; reason: string }>
  /** Our pushes an editor's stale save put back, already pulled: told until pushed again. */
  reverted: Array<{
    path: string
    kind: string
    id: string
    at: string
    leaves: RevertedLeaf[]
    trash?: string
  }>
  /** Media whose bytes nothing compared (upstream lists no dates): never called "agree". */
  unverified: Array<{ path: string; verifiedAt: string | null }>
}

/** Nothing to sync and nothing left unsaid: a refused token is not clean, whatever the listings say. */
export function isClean(read: StatusRead): boolean {
  return read.changes.length === 0 && read.problems.length === 0 && read.tokenRefused === undefined
}

/** Reads the status of `session.scope` (everything when empty); read-only, no lock needed. */
export async function readStatus(
  session: EngineSession,
  opts: { anonymous?: boolean } = {},
): Promise<StatusRead> {
  const { deps, scope, client, ws } = session
  const [
    { planRun, planUnlessUnchanged, inScope, checkScope },
    { changesOf },
    { probeStatus },
    { predictFailures },
    { heldNow, heldWithPause },
    { RecentPushes },
    { revertedLeaves },
    { unverifiedMedia },
  ] = await Promise.all([
    import('../engine/plan-and-apply.js'),
    import('../engine/plan.js'),
    import('./status-probes.js'),
    import('../engine/predict.js'),
    import('./held-now.js'),
    import('../state/recent-pushes.js'),
    import('../engine/own-pushes.js'),
    import('../engine/media/media-verified.js'),
  ])
  // The whole workspace: when the listings' 304s and the files' stats show nothing changed, the
  // answer comes from that comparison (engine/unchanged-run.ts), with no plan of every item.
  // Files named alone are planned alone (plan-edits.ts), unless one is deleted: what watch holds
  // of a deletion is decided by the guards over every deletion of the workspace (held below).
  const planning =
    scope.length === 0
      ? planUnlessUnchanged(deps)
      : planRun(deps, { scope }).then(async (narrow) =>
          narrow.fresh && narrow.plan.items.some((item) => item.action === 'delete-remote')
            ? planRun(deps, {})
            : narrow,
        )
  // The token, the pause and the schedule, asked for while the listings are read.
  const probing = probeStatus({ client, root: ws.root, scope, anonymous: opts.anonymous === true }, planning)
  // A plan that fails is reported as such, not as the probe that waited for it.
  probing.catch(() => {})
  const run = await planning
  if ('unchanged' in run) {
    const { tokenRefused, watchPaused, scheduled } = await probing
    const recent = await RecentPushes.load(ws.root)
    return {
      changes: [],
      problems: [],
      notSynced: [],
      reverted: revertedList(recent, scope, inScope),
      unverified: run.unverified,
      inherited: [],
      scheduled,
      watchPaused,
      held: heldWithPause([], watchPaused, [], scope),
      tokenRefused,
      ...(opts.anonymous ? { anonymous: true as const } : {}),
    }
  }
  const planned = run
  await planned.media?.dispose()
  checkScope(planned, scope)
  const { tokenRefused, watchPaused, scheduled } = await probing
  const pending = changesOf(planned.plan).filter((item) => inScope(item.path, scope))
  // What watch holds: the same guards over the same plan, and the pause.
  const held = await heldNow(deps, planned, watchPaused, scope)
  // What the run would refuse: the same checks as `--dry-run` and the executor.
  const failures = await predictFailures(deps, planned, pending)
  // A pull that would put back leaves of our own recent push (an editor's stale save). Every
  // status reads this file whole beside the state, as it reads each media item's verifiedAt
  // from the state: both are facts about one item, and belong in that item's own record.
  const recent = await RecentPushes.load(ws.root)
  const revertedBy = (path: string, kind: string) => {
    const push = recent.get(path)
    const entry = planned.remote.get(path)
    const codec = deps.codecs.find((c) => c.kind === kind)
    if (!push || !entry || !codec) return []
    return revertedLeaves(push, codec.toFile(entry.object))
  }
  const changes = pending.map(
    ({
      kind,
      id,
      path,
      local,
      remote,
      action,
      from,
      inherited,
      leaves,
      reason,
      publishing,
    }): StatusChange => {
      const problems = planned.local.get(path)?.problems
      const error = failures.get(path) ?? publishBlocked({ path, action, publishing })
      const reverted = action === 'pull' || action === 'merge' ? revertedBy(path, kind) : []
      return {
        kind,
        id,
        path,
        local,
        remote,
        action,
        ...(from ? { from } : {}),
        ...(inherited ? { inherited } : {}),
        ...(problems ? { problems } : {}),
        ...(leaves?.length ? { leaves } : {}),
        ...(reason ? { reason } : {}),
        ...(publishing ? { connection: publishing.connection } : {}),
        ...(publishing?.governedBy ? { governedBy: publishing.governedBy } : {}),
        ...(error !== undefined ? { error } : {}),
        ...(reverted.length ? { reverted } : {}),
      }
    },
  )
  // Items the server lists from the parent project it inherits from (locked there).
  const inherited = [...planned.remote.values()]
    .filter((entry) => entry.inherited && inScope(entry.path, scope))
    .map((entry) => entry.path)
    .sort()
  // Files that stand for no item, and server items no file can hold (a pull fails on them).
  const problems: StatusProblem[] = [
    ...planned.scanProblems.filter((p) => inScope(p.path, scope)),
    ...(scope.length === 0
      ? planned.remoteProblems.map((p) => ({ kind: p.kind, id: p.id, problems: [p.problem] }))
      : []),
  ]
  // Files in the kind folders that no run reads (a subfolder, a name without .json).
  const notSynced = (planned.strays ?? []).filter((stray) => inScope(stray.path.replace(/\/$/, ''), scope))
  // Media bytes nothing compared in this run (upstream lists no dates): never called "agree".
  const changed = new Set(changes.map((c) => c.path))
  const unverified = unverifiedMedia(
    planned.store,
    planned.media,
    (path) => !inScope(path, scope) || changed.has(path),
  )
  // Our pushes an editor's stale save put back, already pulled: told until pushed again.
  const reverted = revertedList(recent, scope, inScope)
  return {
    changes,
    problems,
    notSynced,
    reverted,
    unverified,
    inherited,
    scheduled,
    watchPaused,
    held,
    tokenRefused,
    ...(opts.anonymous ? { anonymous: true as const } : {}),
  }
}

/** Our pushes an editor's stale save put back, already pulled: told until pushed again. */
function revertedList(
  recent: RecentPushes,
  scope: readonly string[],
  inScope: (path: string, scope: readonly string[]) => boolean,
): StatusRead['reverted'] {
  return recent
    .reverted()
    .filter(([path]) => inScope(path, scope))
    .map(([path, push]) => ({
      path,
      kind: push.kind,
      id: push.id,
      at: push.reverted.at,
      leaves: push.reverted.leaves,
      ...(push.reverted.trash ? { trash: push.reverted.trash } : {}),
    }))
}

/** The `status --json` document (design.md). */
export function statusDocument(
  target: { server: string; project: string; environment: string },
  read: StatusRead,
): Record<string, unknown> {
  const { changes, problems, inherited, scheduled, watchPaused, held, tokenRefused, anonymous } = read
  const { notSynced, reverted, unverified } = read
  const { server, project, environment } = target
  return {
    server,
    project,
    environment,
    clean: isClean(read),
    changes,
    ...(problems.length ? { problems } : {}),
    ...(notSynced.length ? { notSynced } : {}),
    ...(reverted.length ? { reverted } : {}),
    ...(unverified.length ? { unverified } : {}),
    ...(inherited.length ? { inherited } : {}),
    ...(scheduled.length ? { scheduled } : {}),
    ...(held.length ? { held } : {}),
    ...(watchPaused ? { watchPaused } : {}),
    ...(tokenRefused === undefined ? {} : { token: { refused: tokenRefused } }),
    ...(anonymous ? { token: { checked: false } } : {}),
  }
}
