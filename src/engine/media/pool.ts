// Runs fn over items with at most `limit` at a time (media transfers: the client's queue caps
// requests in flight anyway; this keeps that many transfers busy instead of one).

export async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length && !signal?.aborted) await fn(items[next++] as T)
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
}
