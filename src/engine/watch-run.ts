// The engine as the watch daemon's work queue runs it (docs/watch.md "The run"): plan the dirty
// paths (or everything), carry out the sync selection (only the pull side while the watcher is
// paused), and report the outcome in the queue's terms. The daemon holds the workspace lock for
// its whole life, so this does not take it.

import { RemoteError } from '../remote/errors.js'
import type { Outcome } from './outcome.js'
import { applyRun, type EngineDeps, planRun, SELECT } from './run.js'

/** Failures worth retrying soon: the server or the way to it, not the item. */
const TRANSIENT = new Set(['server', 'rate-limited', 'network', 'timeout'])

export type WatchRunOutcome =
  | { kind: 'done'; retryPaths: string[]; outcome: Outcome }
  | { kind: 'offline'; cause: unknown }

/** Whether the error, or one behind it (a listing stop wraps the client's error), is the way to the server. */
function unreachable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof RemoteError && TRANSIENT.has(e.code)) return true
  }
  return false
}

export function watchRun(
  deps: EngineDeps,
  opts: {
    paused: () => Promise<boolean>
    /** Asked at the start of a full run: read every file, not trusting the stat cache. */
    rehash?: () => boolean
    /**
     * A full run finds local changes the watcher has not judged yet (a checkout under way, events
     * it missed): the daemon puts them through the mass change guard first. True: carry out only
     * the pull side this time.
     */
    holdPushes?: (localChanges: { changed: string[]; deleted: string[] }) => Promise<boolean>
  },
) {
  return async (
    paths: ReadonlySet<string>,
    context: { full: boolean; signal: AbortSignal },
  ): Promise<WatchRunOutcome> => {
    const empty: Outcome = { applied: [], conflicts: [], failed: [] }
    if (!context.full && paths.size === 0) return { kind: 'done', retryPaths: [], outcome: empty }
    try {
      const planned = await planRun(deps, { rehash: context.full && (opts.rehash?.() ?? false) })
      let pullOnly = await opts.paused()
      if (!pullOnly && context.full && opts.holdPushes) {
        const pushSide = planned.plan.items.filter((i) => i.action === 'push' || i.action === 'delete-remote')
        pullOnly = await opts.holdPushes({
          changed: pushSide.map((i) => i.path),
          deleted: pushSide.filter((i) => i.action === 'delete-remote').map((i) => i.path),
        })
      }
      const outcome = await applyRun(deps, planned, {
        select: pullOnly ? SELECT.pull : SELECT.sync,
        scope: context.full ? [] : [...paths],
        dryRun: false,
        allowDeletes: false,
        reportScanProblems: true,
        reportRemoteProblems: context.full,
        signal: context.signal,
      })
      const retryPaths = outcome.failed
        .filter((f) => f.code !== undefined && TRANSIENT.has(f.code))
        .map((f) => f.path)
      return { kind: 'done', retryPaths, outcome }
    } catch (error) {
      if (unreachable(error)) return { kind: 'offline', cause: error }
      throw error
    }
  }
}
