// One rate-limited queue per server and limit, shared by every client in the process, so the
// engine, the poller and any later command together never exceed `requestsPerSecond`. Every
// HTTP attempt (first tries, retries, re-reads) is one task of this queue; waits between retries
// happen outside it, so a sleeping retry does not hold a slot.
//
// p-queue gives the concurrency and the pause on Retry-After. The rate itself is a window that
// counts each request from its start until `interval` after it *finished*: p-queue's own strict
// window counts from the start only, and a new connection delays the first requests more than
// the later ones, so more than the limit reached the server within one second
// (docs/benchmarks.md, "Figures behind code comments"). A request reaches the server between its
// start and its end, so counting to the end bounds what the server sees.

import PQueue from 'p-queue'

export interface RateLimit {
  requestsPerSecond: number
  concurrency: number
}

export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx' | 'network'

export interface RequestStats {
  /** HTTP attempts started, retries included. */
  requests: number
  /** Attempts that were retries of an earlier one. */
  retries: number
  /** Responses (or transport failures) by class. */
  byStatusClass: Record<StatusClass, number>
  /** 429 answers received. */
  rateLimited: number
  /** Time the queue stood paused on a Retry-After, in ms. */
  heldMs: number
}

export interface SharedQueue {
  run<T>(task: () => Promise<T>): Promise<T>
  /**
   * Stops starting new requests for `ms` (a 429 with Retry-After speaks for the whole server).
   * Returns how much longer the queue now stands still than it already did, in ms.
   */
  holdFor(ms: number): number
  release(): void
}

/** At most `cap` requests in flight or finished less than `intervalMs` ago. */
class CompletionWindow {
  private taken = 0
  private readonly waiters: Array<() => void> = []
  private readonly timers = new Set<NodeJS.Timeout>()

  constructor(
    private readonly cap: number,
    private readonly intervalMs: number,
  ) {}

  async acquire(): Promise<void> {
    if (this.taken < this.cap) {
      this.taken++
      return
    }
    // Someone waits on a slot now: the pending releases must keep the process alive.
    for (const timer of this.timers) timer.ref()
    await new Promise<void>((resolve) => this.waiters.push(resolve))
  }

  release(): void {
    // Node's timers count whole milliseconds from a truncated clock and can fire up to 1 ms
    // before `intervalMs` has really passed: a push at 50/s once showed 51 requests at the
    // server within one second. The slot is freed only once the interval has passed by the
    // monotonic clock.
    const due = performance.now() + this.intervalMs
    const free = () => {
      const left = due - performance.now()
      if (left > 0) {
        this.arm(free, Math.ceil(left))
        return
      }
      const next = this.waiters.shift()
      // The slot passes straight to the next waiter, so `taken` stays the same.
      if (next) next()
      else this.taken--
    }
    this.arm(free, this.intervalMs)
  }

  private arm(callback: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      callback()
    }, ms)
    // With nobody waiting, a pending release must not delay the end of a short CLI run.
    if (this.waiters.length === 0) timer.unref()
    this.timers.add(timer)
  }
}

interface Entry {
  queue: PQueue
  window: CompletionWindow
  refs: number
  holdUntil: number
  holdTimer: NodeJS.Timeout | undefined
}

const registry = new Map<string, Entry>()

export function emptyStats(): RequestStats {
  return {
    requests: 0,
    retries: 0,
    byStatusClass: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, network: 0 },
    rateLimited: 0,
    heldMs: 0,
  }
}

/** p-queue wants a whole number of tasks per interval: 2.5/s becomes 1 task per 400 ms. */
export function intervalFor(requestsPerSecond: number): { intervalCap: number; interval: number } {
  if (Number.isInteger(requestsPerSecond)) return { intervalCap: requestsPerSecond, interval: 1000 }
  return { intervalCap: 1, interval: Math.ceil(1000 / requestsPerSecond) }
}

export function acquireQueue(origin: string, limit: RateLimit): SharedQueue {
  const key = `${origin}|${limit.requestsPerSecond}|${limit.concurrency}`
  let entry = registry.get(key)
  if (!entry) {
    entry = {
      queue: new PQueue({ concurrency: limit.concurrency }),
      window: (() => {
        const { intervalCap, interval } = intervalFor(limit.requestsPerSecond)
        return new CompletionWindow(intervalCap, interval)
      })(),
      refs: 0,
      holdUntil: 0,
      holdTimer: undefined,
    }
    registry.set(key, entry)
  }
  entry.refs++
  // A hold from an earlier client still applies: keep the process alive for it again.
  entry.holdTimer?.ref()
  const e = entry
  let released = false
  return {
    run: (task) =>
      e.queue.add(async () => {
        await e.window.acquire()
        try {
          return await task()
        } finally {
          e.window.release()
        }
      }),
    holdFor(ms) {
      const until = Date.now() + ms
      if (until <= e.holdUntil) return 0
      const added = until - Math.max(Date.now(), e.holdUntil)
      e.holdUntil = until
      e.queue.pause()
      if (e.holdTimer) clearTimeout(e.holdTimer)
      e.holdTimer = setTimeout(() => {
        e.holdTimer = undefined
        e.queue.start()
      }, ms)
      if (e.refs === 0) e.holdTimer.unref()
      return added
    },
    release() {
      if (released) return
      released = true
      e.refs--
      // The entry stays: a client opened later (watch reconnecting, a second command in one
      // process) must still see the requests and the Retry-After hold of the last second. With
      // no client left, its timers must not keep the process alive.
      if (e.refs === 0) e.holdTimer?.unref()
    },
  }
}
