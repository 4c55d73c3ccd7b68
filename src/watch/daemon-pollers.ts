// What the daemon does on a timer once it is up: the remote poll (the stat look, when the poll
// takes one, is taken before it queues its run, so edits do not wait behind it), the slower deep
// rescan that reads every file, and the paced re-read of media bytes the listing cannot vouch for.

import type { EngineDeps } from '../engine/plan-apply-types.js'
import type { DaemonStatus } from './daemon-control.js'
import { messageOf } from './daemon-errors.js'
import { startMediaVerifier, type VerifyBudget } from './media-verifier.js'
import { startPoller } from './poller.js'
import type { WatchRuns } from './run-policy.js'
import type { SaveTimer } from './save-timer.js'
import type { WatchEngine } from './watch-engine.js'
import type { EventSink } from './watch-events.js'
import type { WorkQueue } from './work-queue.js'

/** The deep rescan: catches an edit that kept size and mtime, which the stat cache would miss. */
export const DEFAULT_RESCAN_MS = 5 * 60_000

export interface DaemonPollers {
  /** Stops them all, waiting for none. */
  stop(): Promise<unknown>
}

export function startPollers(
  every: {
    /** The remote poll's interval (watch.pollSeconds). */
    pollMs: number
    rescanMs?: number | undefined
    /** The budget for re-reading media bytes (watch.verifyMedia); none: no re-reading. */
    verifyMedia?: VerifyBudget | undefined
  },
  p: {
    media: EngineDeps['media']
    logger: EngineDeps['logger']
    status: DaemonStatus
    queue: WorkQueue
    runs: WatchRuns
    engine: WatchEngine
    saver: SaveTimer
    emit: EventSink
  },
): DaemonPollers {
  const { status, queue, runs, logger } = p
  const fullRun = async () => {
    const outcome = await queue.requestFull()
    if (outcome.kind === 'offline') throw new Error('the server is out of reach')
    if (outcome.kind === 'error') throw outcome.error
    status.lastFullRunAt = new Date().toISOString()
  }
  const logRetry = (error: unknown, retryInMs: number) =>
    logger.warn({ error: messageOf(error), retryInMs }, 'watch: full reconcile failed')
  const poll = startPoller({
    intervalMs: every.pollMs,
    task: async () => {
      await runs.lookAhead()
      await fullRun()
    },
    onError: logRetry,
  })
  const rescan = startPoller({
    intervalMs: every.rescanMs ?? DEFAULT_RESCAN_MS,
    task: () => {
      status.rehashNext = true
      return fullRun()
    },
    onError: logRetry,
  })
  const verifier = startVerifier(every.verifyMedia, p)
  return { stop: () => Promise.all([poll.stop(0), rescan.stop(0), verifier?.stop(0)]) }
}

/** Media bytes the listing cannot vouch for (upstream) are re-read, paced, oldest first. */
function startVerifier(budget: VerifyBudget | undefined, p: Parameters<typeof startPollers>[1]) {
  const { media, status, engine, emit } = p
  if (media && !media.recheck) media.recheck = new Set()
  const recheck = media?.recheck
  if (!(media && recheck && budget)) return undefined
  return startMediaVerifier({
    budget,
    candidates: () => (status.offline || status.stopping ? [] : engine.mediaToVerify()),
    hash: (id) => media.api.hash(id),
    verified: (item, at) => {
      if (engine.markVerified(item.path, item.sha256, at)) p.saver.unsaved()
      emit({ event: 'verified', path: item.path, same: true })
    },
    changed: (item, told) => {
      if (!told) emit({ event: 'verified', path: item.path, same: false })
      recheck.add(item.id)
      // The listing looks as before: only a full plan reads the item again.
      p.runs.requireFull()
      void p.queue.requestFull()
    },
    onError: (error) => p.logger.warn({ error: messageOf(error) }, 'watch: re-reading media bytes failed'),
  })
}
