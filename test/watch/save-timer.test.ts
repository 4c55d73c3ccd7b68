import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { createSaveTimer, STATE_SAVE_MAX_DELAY_MS, STATE_SAVE_QUIET_MS } from '../../src/watch/save-timer.js'

describe('the state save after edit-only runs', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  function timer() {
    const saves: number[] = []
    const errors: unknown[] = []
    const saver = createSaveTimer(
      async () => {
        saves.push(Date.now())
      },
      (error) => errors.push(error),
    )
    return { saver, saves, errors }
  }

  test('saves once edits have paused, not after each edit', async () => {
    const { saver, saves } = timer()
    const start = Date.now()
    for (let i = 0; i < 5; i++) {
      saver.unsaved()
      await vi.advanceTimersByTimeAsync(500)
    }
    expect(saves).toEqual([])
    await vi.advanceTimersByTimeAsync(STATE_SAVE_QUIET_MS)
    expect(saves).toEqual([start + 2_000 + STATE_SAVE_QUIET_MS])
  })

  test('saves at least every 30 s while edits go on', async () => {
    const { saver, saves } = timer()
    const start = Date.now()
    for (let i = 0; i < 70; i++) {
      saver.unsaved()
      await vi.advanceTimersByTimeAsync(1_000)
    }
    expect(saves[0]).toBe(start + STATE_SAVE_MAX_DELAY_MS)
    expect(saves).toHaveLength(2)
  })

  test('a cancelled save (shutdown saves on its own) never runs; a failed one is reported', async () => {
    const { saver, saves } = timer()
    saver.unsaved()
    saver.cancel()
    await vi.advanceTimersByTimeAsync(STATE_SAVE_MAX_DELAY_MS)
    expect(saves).toEqual([])
    const errors: unknown[] = []
    const failing = createSaveTimer(
      () => Promise.reject(new Error('disk full')),
      (error) => errors.push(error),
    )
    failing.unsaved()
    await vi.advanceTimersByTimeAsync(STATE_SAVE_QUIET_MS)
    expect(errors).toEqual([new Error('disk full')])
  })
})
