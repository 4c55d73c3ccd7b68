// The daemon gives back what a full run allocated without any node flag (release-memory.ts).

import { getHeapSpaceStatistics } from 'node:v8'
import { expect, test } from 'vitest'
import { releaseMemory } from '../../src/watch/release-memory.js'

/** About 60 MB of small objects, dropped as soon as they are made. */
function allocateGarbage(): number {
  let kept = 0
  for (let round = 0; round < 6; round++) {
    const batch = Array.from({ length: 100_000 }, (_, i) => ({ id: `item-${round}-${i}`, n: [i, round] }))
    kept += batch.length
  }
  return kept
}

test('after a full run, the garbage it left is collected at once', () => {
  releaseMemory('full')
  const before = process.memoryUsage().heapUsed
  expect(allocateGarbage()).toBe(600_000)
  releaseMemory('full')
  // Without a collection most of those 60 MB would still be counted as used.
  expect(process.memoryUsage().heapUsed - before).toBeLessThan(5 * 1024 * 1024)
})

/** Objects that live through a few young collections make V8 grow its young generation. */
function growYoungGeneration(): number {
  const survivors: object[] = []
  for (let i = 0; i < 400_000; i++) survivors.push({ id: `survivor-${i}` })
  return survivors.length
}

test('after a quiet poll, a young generation a full run grew is collected: the poll buffers go', () => {
  expect(growYoungGeneration()).toBe(400_000)
  const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!
  expect(young.space_size).toBeGreaterThan(8 * 1024 * 1024)
  releaseMemory('young')
  const before = process.memoryUsage().arrayBuffers
  for (let i = 0; i < 64; i++) Buffer.alloc(128 * 1024).fill(i)
  expect(process.memoryUsage().arrayBuffers - before).toBeGreaterThan(4 * 1024 * 1024)
  releaseMemory('young')
  expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1024 * 1024)
})
