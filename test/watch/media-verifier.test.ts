// The verifier's pacing on a clock the test moves (vitest's fake timers): at most
// requestsPerHour reads and megabytesPerHour of bytes in any hour, the least recently verified
// item first, so every item is read again within items / requestsPerHour hours.

import { afterEach, beforeEach, expect, test, vi } from 'vitest'
import { startMediaVerifier, type VerifyCandidate } from '../../src/watch/media-verifier.js'

const HOUR = 3_600_000
const MB = 1024 * 1024

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z') })
})
afterEach(() => {
  vi.useRealTimers()
})

function items(count: number, size: number): VerifyCandidate[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `m${i}`,
    path: `media/${i}.png`,
    sha256: `sha-${i}`,
    size,
    verifiedAt: null,
  }))
}

function verifierOver(
  list: VerifyCandidate[],
  budget: { requestsPerHour: number; megabytesPerHour: number },
) {
  const reads: string[] = []
  const changed: string[] = []
  const told: boolean[] = []
  const verifier = startMediaVerifier({
    budget,
    candidates: () => list.map((item) => ({ ...item })),
    hash: async (id) => {
      reads.push(id)
      const item = list.find((i) => i.id === id)!
      return { sha256: id === 'm3' ? 'other-bytes' : item.sha256, size: item.size }
    },
    verified: (candidate, at) => {
      list.find((i) => i.id === candidate.id)!.verifiedAt = at
    },
    changed: (candidate, again) => {
      changed.push(candidate.id)
      told.push(again)
    },
    onError: (error) => {
      throw error
    },
  })
  return { reads, changed, told, verifier }
}

test('requestsPerHour paces the reads; every item is read within items / requestsPerHour hours, oldest first', async () => {
  const list = items(10, 1000)
  const { reads, changed, verifier } = verifierOver(list, { requestsPerHour: 5, megabytesPerHour: 100 })
  await vi.advanceTimersByTimeAsync(HOUR)
  expect(reads).toHaveLength(5)
  await vi.advanceTimersByTimeAsync(HOUR)
  expect(reads).toHaveLength(10)
  // Every item once within 10 / 5 = 2 hours; the one with other bytes goes to a full run.
  expect(new Set(reads).size).toBe(10)
  expect(changed).toEqual(['m3'])
  // Then the least recently looked at again; m3 (other bytes, not yet taken in) waits its turn.
  await vi.advanceTimersByTimeAsync(HOUR / 5)
  expect(reads.at(-1)).toBe('m0')
  await verifier?.stop(0)
})

test('other bytes found again against the same base are not news: told once, the full run asked for each time', async () => {
  const list = items(2, 1000)
  const { changed, told, verifier } = verifierOver(list, { requestsPerHour: 60, megabytesPerHour: 100 })
  list[1]!.id = 'm3'
  await vi.advanceTimersByTimeAsync((HOUR / 60) * 4)
  expect(changed).toEqual(['m3', 'm3'])
  expect(told).toEqual([false, true])
  // A new base (the full run took the bytes in) that differs again is news again.
  list[1]!.sha256 = 'sha-new'
  await vi.advanceTimersByTimeAsync((HOUR / 60) * 2)
  expect(told.at(-1)).toBe(false)
  await verifier?.stop(0)
})

test('megabytesPerHour holds back reads that would pass it, and frees up as the hour moves on', async () => {
  const list = items(4, 0.6 * MB)
  const { reads, verifier } = verifierOver(list, { requestsPerHour: 60, megabytesPerHour: 1 })
  await vi.advanceTimersByTimeAsync(HOUR - 1)
  expect(reads).toHaveLength(1)
  await vi.advanceTimersByTimeAsync(HOUR)
  expect(reads).toHaveLength(2)
  await verifier?.stop(0)
})

test('an item larger than the whole hourly budget is read once the last hour read nothing', async () => {
  const list = items(2, 5 * MB)
  const { reads, verifier } = verifierOver(list, { requestsPerHour: 60, megabytesPerHour: 1 })
  await vi.advanceTimersByTimeAsync(HOUR - 1)
  expect(reads).toHaveLength(1)
  await verifier?.stop(0)
})

test('requestsPerHour 0 turns it off', () => {
  expect(
    startMediaVerifier({
      budget: { requestsPerHour: 0, megabytesPerHour: 1 },
      candidates: () => [],
      hash: async () => undefined,
      verified: () => {},
      changed: () => {},
      onError: () => {},
    }),
  ).toBeUndefined()
})
