import { afterEach, describe, expect, test, vi } from 'vitest'
import { createPublishQuiet } from '../../src/watch/publish-quiet.js'

describe('publish quiet: a burst of saves is one publish, once the saves pause', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  test('a publish waits while saves go on, and the path is queued once, when it is quiet', () => {
    vi.useFakeTimers()
    const queued: string[][] = []
    const quiet = createPublishQuiet(
      1000,
      (paths) => queued.push(paths),
      () => Date.now(),
    )
    quiet.saved(['content/a.json'])
    expect(quiet.defer('content/a.json')).toBe(true)
    vi.advanceTimersByTime(600)
    quiet.saved(['content/a.json'])
    expect(quiet.defer('content/a.json')).toBe(true)
    vi.advanceTimersByTime(600)
    // The first wait ended, but the second save restarted the quiet period.
    expect(queued).toEqual([])
    vi.advanceTimersByTime(400)
    expect(queued).toEqual([['content/a.json']])
    // Quiet now: the queued run publishes at once.
    expect(quiet.defer('content/a.json')).toBe(false)
    quiet.close()
  })

  test('an item never saved under watch, or a quiet period of 0, never waits', () => {
    const quiet = createPublishQuiet(1000, () => {})
    expect(quiet.defer('content/b.json')).toBe(false)
    const none = createPublishQuiet(0, () => {})
    none.saved(['content/b.json'])
    expect(none.defer('content/b.json')).toBe(false)
  })
})
