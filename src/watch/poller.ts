// Runs a task every interval: the remote poll (every watch.pollSeconds) and the periodic full
// rescan that catches what the watcher missed. The next run is scheduled only after the current
// one settles, so runs never overlap however slow the server is. While the task fails (the
// server is gone) the delay doubles up to a cap, with jitter so many daemons coming back after
// an outage do not hit the server in step; one success returns to the normal interval.

import { finishOrAbort } from './deadline.js'

/** While failing, wait at most this long between attempts (or the interval, if it is longer). */
export const DEFAULT_MAX_BACKOFF_MS = 120_000
/** Each backoff delay is moved randomly by up to this share, either way. */
export const DEFAULT_JITTER = 0.2

export interface PollerOptions {
  intervalMs: number
  /** Throws (or rejects) on failure. The signal aborts when stop() gives up waiting. */
  task: (signal: AbortSignal) => Promise<void>
  maxBackoffMs?: number
  jitter?: number
  /** Run once right away instead of after the first interval. */
  runAtStart?: boolean
  /** Told about every failure, with the delay before the next attempt. */
  onError?: (error: unknown, retryInMs: number) => void
  random?: () => number
}

export interface Poller {
  /** Run as soon as possible (now, or right after the run in flight); the interval restarts after it. */
  trigger(): void
  /** Consecutive failures so far (0 after a success). */
  readonly failures: number
  /** No new runs; resolves when the run in flight settles or, after deadlineMs, aborts it and resolves. */
  stop(deadlineMs?: number): Promise<void>
}

export function startPoller(options: PollerOptions): Poller {
  const maxBackoffMs = Math.max(options.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS, options.intervalMs)
  const jitter = options.jitter ?? DEFAULT_JITTER
  const random = options.random ?? Math.random
  let failures = 0
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let inFlight: Promise<void> | undefined
  let triggeredDuringRun = false
  const abort = new AbortController()

  function delayAfterRun(): number {
    if (failures === 0) return options.intervalMs
    const backoff = Math.min(maxBackoffMs, options.intervalMs * 2 ** failures)
    return Math.round(backoff * (1 + jitter * (2 * random() - 1)))
  }

  function schedule(delayMs: number): void {
    if (stopped) return
    if (timer !== undefined) clearTimeout(timer)
    timer = setTimeout(runOnce, delayMs)
  }

  function runOnce(): void {
    timer = undefined
    if (stopped || inFlight !== undefined) return
    inFlight = (async () => {
      let error: unknown
      let failed = false
      try {
        await options.task(abort.signal)
      } catch (caught) {
        failed = true
        error = caught
      }
      failures = failed ? failures + 1 : 0
      // One delay per run, so the one reported is the one waited.
      const nextDelayMs = delayAfterRun()
      try {
        if (failed && !stopped) options.onError?.(error, nextDelayMs)
      } catch {
        // a logger that throws must not stop the polling
      }
      // A trigger that came in during a successful run asks for fresh data: run again now. While
      // failing, triggers wait for the backoff, or every local edit would hammer a dead server.
      const again = triggeredDuringRun && !failed
      triggeredDuringRun = false
      inFlight = undefined
      schedule(again ? 0 : nextDelayMs)
    })()
  }

  schedule(options.runAtStart ? 0 : options.intervalMs)

  return {
    trigger() {
      if (stopped) return
      if (inFlight !== undefined) triggeredDuringRun = true
      else schedule(0)
    },
    get failures() {
      return failures
    },
    async stop(deadlineMs = 5_000) {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      if (inFlight !== undefined) await finishOrAbort(inFlight, deadlineMs, abort, 'poller stopped')
    },
  }
}
