// Bounded parallelism for file and request work: most of a large run is waiting on the disk
// or the server, and one item at a time leaves both idle.

/** Runs `work` over the items, at most `limit` at a time; none starts once `stopped()` says so. */
export async function inParallel<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
  stopped: () => boolean = () => false,
): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length && !stopped()) {
      const index = next++
      await work(items[index]!, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}
