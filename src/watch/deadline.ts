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
