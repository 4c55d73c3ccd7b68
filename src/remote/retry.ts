// When to try a request again, and how long to wait first. Capped exponential backoff with
// full jitter (a random delay between 0 and the cap) spreads out clients that failed together,
// so a server that comes back is not hit by all of them at once.

export interface BackoffPolicy {
  baseMs: number
  capMs: number
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 250, capMs: 10_000 }

/** Delay before retry number `attempt` (1 = the first retry). */
export function backoffDelayMs(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt - 1))
  return Math.round(Math.random() * ceiling)
}

/**
 * Retry-After as milliseconds from `now`: either delta-seconds or an HTTP date. Undefined when
 * the header is absent or unreadable (then ordinary backoff applies).
 */
export function parseRetryAfterMs(
  value: string | string[] | undefined,
  now = Date.now(),
): number | undefined {
  const text = Array.isArray(value) ? value[0] : value
  if (text === undefined || text.trim() === '') return undefined
  const trimmed = text.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000)
  const date = Date.parse(trimmed)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, date - now)
}

/** Waits ms; with a signal, rejects with its reason as soon as it is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return new Promise((resolve) => setTimeout(resolve, ms))
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
