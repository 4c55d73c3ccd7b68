// Shutdown waits for work, but never longer than it promised the user.

/** Whether `promise` settles (either way) within `ms`; it is not cancelled, only no longer awaited. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms))
  })
  const settled = promise.then(
    () => true as const,
    () => true as const,
  )
  const result = await Promise.race([settled, timeout])
  clearTimeout(timer)
  return result
}

/**
 * Waits for the work in flight up to `deadlineMs`; past it, aborts the work's signal and gives it
 * `graceMs` more to notice. True when it settled before the deadline.
 */
export async function finishOrAbort(
  inFlight: Promise<unknown>,
  deadlineMs: number,
  controller: AbortController,
  reason: string,
  graceMs = 0,
): Promise<boolean> {
  if (await settlesWithin(inFlight, deadlineMs)) return true
  controller.abort(new Error(reason))
  if (graceMs > 0) await settlesWithin(inFlight, graceMs)
  return false
}
