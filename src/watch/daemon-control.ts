// The daemon's request channel: `resolve` and `restore` asked by the CLI (requests.ts) and the
// local page's handle on the daemon (src/page/). Each is carried out through the work queue,
// between two runs, on the daemon's own state.

import type { Outcome } from '../engine/outcome.js'
import type { EngineLogger } from '../log/engine-logger.js'
import type { PauseControl } from './pause-control.js'
import { type SettleRequest, serveRequests } from './requests.js'
import type { TokenRetry } from './token-retry.js'
import type { WatchEngine } from './watch-engine.js'
import type { OutcomeReporter } from './watch-events.js'
import type { WorkQueue } from './work-queue.js'

/** What the daemon is doing right now, for the local page. */
export interface DaemonState {
  offline: boolean
  /** The server refused the token and no new one was found. */
  tokenRefused: boolean
  /** Local changes waiting for a run. */
  queued: number
  pollMs: number
  /** ISO time the last full reconcile (a remote poll) ended. */
  lastFullRunAt?: string
}

/** The running daemon, as the local page drives it: everything goes through the work queue. */
export interface DaemonControl {
  state(): DaemonState
  /** `resolve` or `restore`, exactly as the CLI asks it (requests.ts). */
  settle(request: SettleRequest): Promise<Outcome>
  /** Pushes held changes under `scope` (deletions allowed) and lifts the pause, as `cms-sync push` does. */
  release(scope: string[]): Promise<Outcome>
}

/** The daemon's flags, shared by its parts. */
export interface DaemonStatus {
  /** The last run found the server out of reach. */
  offline: boolean
  /** Shutdown began: nothing new starts, nothing more is told of being offline. */
  stopping: boolean
  /** The next full request reads every file (the deep rescan). */
  rehashNext: boolean
  /** ISO time the last full reconcile ended. */
  lastFullRunAt?: string
}

interface Channel {
  queue: WorkQueue
  engine: WatchEngine
  reporter: OutcomeReporter
  logger: EngineLogger
}

/** Carries out a settle request between two runs and tells what it did. */
async function settleBetweenRuns(c: Channel, request: SettleRequest): Promise<Outcome> {
  const outcome = await c.queue.exclusive(() => c.engine.settle(request))
  c.reporter.outcome(outcome, false)
  return outcome
}

/** `cms-sync resolve` / `restore` while the daemon runs; resolves once its key is written. */
export function serveCliRequests(root: string, c: Channel): Promise<() => void> {
  return serveRequests(root, async (request) => {
    c.logger.info({ ...request }, `watch: ${request.command} asked by the CLI`)
    return { outcome: await settleBetweenRuns(c, request) }
  })
}

export function createDaemonControl(
  c: Channel & { status: DaemonStatus; tokens: TokenRetry; pauses: PauseControl; pollMs: number },
): DaemonControl {
  const { status } = c
  return {
    state: () => ({
      offline: status.offline,
      tokenRefused: c.tokens.refused(),
      queued: c.queue.pending.size,
      pollMs: c.pollMs,
      ...(status.lastFullRunAt ? { lastFullRunAt: status.lastFullRunAt } : {}),
    }),
    settle: async (request) => {
      c.logger.info({ ...request }, `watch: ${request.command} asked by the local page`)
      return settleBetweenRuns(c, request)
    },
    release: async (scope) => {
      c.logger.info({ scope }, 'watch: held changes pushed from the local page')
      const outcome = await c.queue.exclusive(() => c.engine.release(scope))
      if (outcome.failed.length === 0) await c.pauses.lift()
      c.reporter.outcome(outcome, false)
      return outcome
    },
  }
}
