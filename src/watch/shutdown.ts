// SIGINT/SIGTERM for the daemon. The order matters: (1) stop taking events, so nothing new starts;
// (2) let the sync in flight finish, because a half-confirmed item is re-planned anyway but a
// finished one is cheaper; (3) past the deadline abort it, since a user pressing Ctrl-C or a
// service manager sending SIGTERM expects an exit within seconds; (4) save state, which only
// holds what the server confirmed. Signals arrive as a promise (CliIo.stopSignal), so tests need
// no real signals and only main.ts touches `process`.

import { settlesWithin } from './deadline.js'
import type { DrainResult } from './work-queue.js'

export const DEFAULT_SHUTDOWN_DEADLINE_MS = 5_000

export interface ShutdownHooks {
  /** Close the watcher and stop the pollers (their runs go through the queue, drained next). */
  stopTakingEvents: () => Promise<void> | void
  /** The work queue's drain: waits for the run in flight up to the given time, then aborts it. */
  drain: (deadlineMs: number) => Promise<DrainResult>
  /** Write the state file (and anything else the daemon keeps) one last time. */
  saveState: () => Promise<void>
  log?: (message: string, fields?: Record<string, unknown>) => void
}

export interface ShutdownReport {
  /** The run in flight (if any) finished before the deadline. */
  finished: boolean
  /** Paths left unsynced; the next start-up reconcile picks them up. */
  pending: number
  durationMs: number
  saveError?: unknown
}

/** Waits for the stop signal, then shuts down. Resolves (never rejects) so the daemon exits 0. */
export async function shutdownOnStop(
  stopSignal: Promise<unknown>,
  hooks: ShutdownHooks,
  deadlineMs = DEFAULT_SHUTDOWN_DEADLINE_MS,
): Promise<ShutdownReport> {
  await stopSignal
  return shutdown(hooks, deadlineMs)
}

export async function shutdown(
  hooks: ShutdownHooks,
  deadlineMs = DEFAULT_SHUTDOWN_DEADLINE_MS,
): Promise<ShutdownReport> {
  const started = performance.now()
  const remaining = () => Math.max(0, deadlineMs - (performance.now() - started))
  const log = hooks.log ?? (() => {})
  log('stopping: no new events')

  // Closing a watcher or a poller should be instant; if it hangs, it must not eat the deadline.
  await settlesWithin(
    Promise.resolve().then(() => hooks.stopTakingEvents()),
    remaining(),
  )
  let drained: DrainResult
  try {
    drained = await hooks.drain(remaining())
  } catch (error) {
    log('draining the queue failed', { error: String(error) })
    drained = { finished: false, pending: new Set() }
  }
  if (!drained.finished) log('abandoned the sync in flight at the deadline', { deadlineMs })

  let saveError: unknown
  try {
    await hooks.saveState()
  } catch (error) {
    saveError = error
    log('saving state failed', { error: String(error) })
  }
  const report: ShutdownReport = {
    finished: drained.finished,
    pending: drained.pending.size,
    durationMs: Math.round(performance.now() - started),
  }
  if (saveError !== undefined) report.saveError = saveError
  log('stopped', { ...report })
  return report
}
