// The pending work between the watcher (and the pollers) and the engine. Dirty paths pile up here
// while a sync runs; at most one run at a time, because every run plans against the same state
// file. A run that cannot reach the server keeps its paths (and its full-scan request) queued and
// is retried with a growing delay, so edits made while the server is away are pushed when it is
// back. The run itself is injected: the lead plugs the engine in.

import { finishOrAbort } from './deadline.js'

export type RunOutcome =
  /** Ran. `retryPaths`: items that failed in a way worth retrying (5xx, 429); they stay queued. */
  | { kind: 'done'; retryPaths?: Iterable<string> }
  /** The server could not be reached: nothing was lost, everything stays queued. */
  | { kind: 'offline'; cause?: unknown }

export interface RunContext {
  /** Reconcile everything (start-up, remote poll, rescan, flood), not only `paths`. */
  full: boolean
  /** Aborted when shutdown stops waiting; the run should abandon its requests and return. */
  signal: AbortSignal
}

export type RunFn = (paths: Set<string>, context: RunContext) => Promise<RunOutcome>

/** What a run came to, as reported to onOutcome and to requestFull's caller. */
export type Settled = RunOutcome | { kind: 'error'; error: unknown }

export const DEFAULT_RETRY_DELAY_MS = 1_000
export const DEFAULT_MAX_RETRY_DELAY_MS = 60_000
/** After a drain deadline aborts the run, how long it gets to notice and return. */
const ABORT_GRACE_MS = 500

export interface WorkQueueOptions {
  run: RunFn
  retryDelayMs?: number
  maxRetryDelayMs?: number
  onOutcome?: (outcome: Settled, paths: ReadonlySet<string>, full: boolean) => void
}

export interface DrainResult {
  /** The run in flight (if any) finished before the deadline. */
  finished: boolean
  /** Paths not synced; the next start-up reconcile finds them again (they differ from the base). */
  pending: Set<string>
}

export interface WorkQueue {
  add(paths: Iterable<string>): void
  /** Ask for a full reconcile; resolves with the outcome of the run that carried it. */
  requestFull(): Promise<Settled>
  /** Paths waiting for the next run (not those of the run in flight). */
  readonly pending: ReadonlySet<string>
  /** A run is in progress or starts on the next tick. */
  readonly running: boolean
  /** Consecutive failed runs (0 after a clean one). */
  readonly failures: number
  /**
   * Runs `job` alone, between two runs (a `resolve` the daemon carries out for the CLI): it
   * starts once the run in flight is over, and no run starts until it is done.
   */
  exclusive<T>(job: () => Promise<T>): Promise<T>
  /** Stop starting runs; wait for the one in flight up to deadlineMs, then abort it. */
  drain(deadlineMs?: number): Promise<DrainResult>
}

export function createWorkQueue(options: WorkQueueOptions): WorkQueue {
  const baseDelay = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS
  const maxDelay = options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS
  let pending = new Set<string>()
  let fullWaiters: Array<(outcome: Settled) => void> = []
  let fullRequested = false
  let inFlight: Promise<void> | undefined
  let inFlightPaths = new Set<string>()
  let inFlightWaiters: Array<(outcome: Settled) => void> = []
  let retryTimer: NodeJS.Timeout | undefined
  let failures = 0
  let draining = false
  const abort = new AbortController()
  const jobs: Array<{ start: () => Promise<void>; cancel: () => void }> = []

  function kick(): void {
    if (draining || inFlight !== undefined) return
    const job = jobs.shift()
    if (job) {
      inFlight = job.start().finally(() => {
        inFlight = undefined
        kick()
      })
      return
    }
    if (retryTimer !== undefined) return
    if (pending.size === 0 && !fullRequested) return
    // Start on the next tick so paths added in the same tick share the run.
    inFlight = new Promise<void>((resolve) => setImmediate(resolve)).then(runOnce).finally(() => {
      inFlight = undefined
      kick()
    })
  }

  async function runOnce(): Promise<void> {
    if (draining || (pending.size === 0 && !fullRequested)) return
    const paths = pending
    const full = fullRequested
    const waiters = fullWaiters
    inFlightWaiters = waiters
    pending = new Set()
    fullRequested = false
    fullWaiters = []
    inFlightPaths = paths

    let outcome: Settled
    try {
      outcome = await options.run(paths, { full, signal: abort.signal })
    } catch (error) {
      outcome = { kind: 'error', error }
    }
    inFlightPaths = new Set()
    inFlightWaiters = []

    const keep = outcome.kind === 'done' ? new Set(outcome.retryPaths ?? []) : paths
    for (const p of keep) pending.add(p)
    // A full reconcile that failed is still owed: a flood or a rescan must not be forgotten.
    if (outcome.kind !== 'done' && full) fullRequested = true
    if (outcome.kind === 'done' && keep.size === 0) failures = 0
    else scheduleRetry()

    options.onOutcome?.(outcome, paths, full)
    for (const resolve of waiters) resolve(outcome)
  }

  function scheduleRetry(): void {
    failures += 1
    if (draining) return
    const delay = Math.min(maxDelay, baseDelay * 2 ** (failures - 1))
    retryTimer = setTimeout(() => {
      retryTimer = undefined
      kick()
    }, delay)
  }

  return {
    add(paths) {
      for (const p of paths) pending.add(p)
      kick()
    },
    requestFull() {
      if (draining) return Promise.resolve({ kind: 'offline', cause: new Error('shutting down') })
      fullRequested = true
      const settled = new Promise<Settled>((resolve) => fullWaiters.push(resolve))
      // Someone is asking now (the remote poller): do not sit out a retry delay for them.
      if (retryTimer !== undefined) {
        clearTimeout(retryTimer)
        retryTimer = undefined
      }
      kick()
      return settled
    },
    exclusive(job) {
      if (draining) return Promise.reject(new Error('cms-sync watch is shutting down'))
      return new Promise((resolve, reject) => {
        jobs.push({
          start: () => job().then(resolve, reject),
          cancel: () => reject(new Error('cms-sync watch is shutting down')),
        })
        kick()
      })
    },
    get pending() {
      return pending
    },
    get running() {
      return inFlight !== undefined
    },
    get failures() {
      return failures
    },
    async drain(deadlineMs = 5_000) {
      draining = true
      if (retryTimer !== undefined) clearTimeout(retryTimer)
      retryTimer = undefined
      const finished =
        inFlight === undefined ||
        (await finishOrAbort(inFlight, deadlineMs, abort, 'cms-sync is shutting down', ABORT_GRACE_MS))
      // Whoever waits for a full run (the remote poller) hears that none is coming.
      const leftOver = [...fullWaiters, ...inFlightWaiters]
      for (const job of jobs.splice(0)) job.cancel()
      fullWaiters = []
      for (const resolve of leftOver) resolve({ kind: 'offline', cause: new Error('shutting down') })
      // An abandoned run's paths count as pending: nothing confirmed them.
      return { finished, pending: new Set([...pending, ...inFlightPaths]) }
    },
  }
}
