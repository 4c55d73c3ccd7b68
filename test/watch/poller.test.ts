import { describe, expect, test, vi } from 'vitest'
import { startPoller } from '../../src/watch/poller.js'
import { sleep, waitFor } from './helpers.js'

describe('poller', () => {
  test('never overlaps itself, however slow the task', async () => {
    let running = 0
    let maxRunning = 0
    let runs = 0
    const poller = startPoller({
      intervalMs: 10,
      runAtStart: true,
      task: async () => {
        running += 1
        maxRunning = Math.max(maxRunning, running)
        await sleep(80) // the scenario: a task slower than the interval, triggered while it runs
        running -= 1
        runs += 1
      },
    })
    for (let i = 0; i < 10; i++) {
      poller.trigger() // triggers during a run queue one more run, they do not start a second
      await sleep(20) // spread over several runs, each trigger landing while one is in flight
    }
    await waitFor(() => runs >= 3)
    await poller.stop()
    expect(maxRunning).toBe(1)
  })

  test('backs off while the task fails, then returns to the interval after a success', async () => {
    const startedAt: number[] = []
    const retryDelays: number[] = []
    let failuresLeft = 3
    const poller = startPoller({
      intervalMs: 40,
      runAtStart: true,
      maxBackoffMs: 250,
      random: () => 0.5, // no jitter, so the delays are exact
      onError: (_error, retryInMs) => retryDelays.push(retryInMs),
      task: async () => {
        startedAt.push(performance.now())
        if (failuresLeft > 0) {
          failuresLeft -= 1
          throw new Error('server gone')
        }
      },
    })
    await waitFor(() => startedAt.length >= 6, { what: 'six runs' })
    await poller.stop()
    expect(retryDelays).toEqual([80, 160, 250]) // doubling, capped
    const gaps = startedAt.slice(1).map((t, i) => t - startedAt[i]!)
    expect(gaps[0]).toBeGreaterThanOrEqual(75)
    expect(gaps[2]).toBeGreaterThanOrEqual(240)
    expect(gaps[3]).toBeLessThan(200) // back to the 40 ms interval (timers may run late, never early)
    expect(poller.failures).toBe(0)
  })

  test('jitter moves a backoff delay by at most the given share', async () => {
    const delays: number[] = []
    let call = 0
    const randoms = [0, 0.999]
    const poller = startPoller({
      intervalMs: 20,
      runAtStart: true,
      jitter: 0.2,
      random: () => randoms[call++ % 2]!,
      onError: (_e, ms) => delays.push(ms),
      task: async () => {
        throw new Error('down')
      },
    })
    await waitFor(() => delays.length >= 2)
    await poller.stop()
    expect(delays[0]).toBe(32) // 40 ms - 20%
    expect(delays[1]).toBeGreaterThan(90) // 80 ms + nearly 20%
    expect(delays[1]).toBeLessThanOrEqual(96)
  })

  test('stop() waits for the run in flight and starts no other', async () => {
    let runs = 0
    let finished = 0
    let finishRun!: () => void
    const poller = startPoller({
      intervalMs: 10,
      runAtStart: true,
      task: async () => {
        runs += 1
        await new Promise<void>((resolve) => {
          finishRun = resolve
        })
        finished += 1
      },
    })
    await waitFor(() => runs === 1)
    vi.useFakeTimers()
    try {
      const stopped = poller.stop()
      poller.trigger()
      finishRun()
      await stopped
      expect(finished).toBe(1)
      // Every timer the poller could have left behind fires now: none starts a run.
      await vi.runAllTimersAsync()
      expect(runs).toBe(1)
    } finally {
      vi.useRealTimers()
    }
  })

  test('stop() gives up at its deadline and aborts the task', async () => {
    let aborted = false
    let running = false
    const poller = startPoller({
      intervalMs: 10,
      runAtStart: true,
      task: (signal) =>
        new Promise<void>((resolve) => {
          running = true
          signal.addEventListener('abort', () => {
            aborted = true
            resolve()
          })
        }),
    })
    await waitFor(() => running, { what: 'the task to start' })
    const started = performance.now()
    await poller.stop(200)
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(aborted).toBe(true)
  })
})
