// The shared rate-limited queue on its own: a slot is free again a whole interval after the
// request that held it ended, as the server could have seen that request until its end.

import { expect, test } from 'vitest'
import { acquireQueue } from '../../src/remote/queue.js'

test('no request starts less than a whole interval after the one whose slot it takes ended', async () => {
  // 12.5 requests a second: one slot, free again 80 ms after each request ends.
  const queue = acquireQueue('http://window-test.invalid', { requestsPerSecond: 12.5, concurrency: 2 })
  const spans: { start: number; end: number }[] = []
  try {
    await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        queue.run(async () => {
          const start = performance.now()
          // Requests take a fraction of a millisecond more or less; some end on a busy loop.
          await new Promise((resolve) => setTimeout(resolve, i % 3))
          const until = performance.now() + (i % 2) * 0.6
          while (performance.now() < until) {}
          spans.push({ start, end: performance.now() })
        }),
      ),
    )
  } finally {
    queue.release()
  }
  const gaps = spans.slice(1).map((span, i) => span.start - spans[i]!.end)
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(80)
})
