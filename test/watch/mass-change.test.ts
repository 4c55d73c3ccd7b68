import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  clearPause,
  createChangeWindow,
  decideMassChange,
  PAUSE_FILE,
  pauseInfoFor,
  readPause,
  setPause,
} from '../../src/watch/mass-change.js'
import { recordBatches, tempWorkspace, waitFor } from './helpers.js'

describe('mass change guard', () => {
  test.each([
    // changed, deleted, tracked -> pause?, reason
    [1, 0, 10, false, undefined],
    [3, 0, 10, false, undefined], // two or three files saved at once never pause
    [3, 3, 10, false, undefined],
    [4, 0, 10, true, 'mass-change'], // over 20% of a small site
    [5, 0, 25, false, undefined], // 20% of a 25-item site
    [6, 0, 25, true, 'mass-change'],
    [25, 0, 25, true, 'mass-change'], // a sed over every page of a small site
    [4, 4, 25, true, 'mass-delete'], // over 10% deleted
    [50, 0, 10_000, false, undefined],
    [51, 0, 10_000, true, 'mass-change'], // over massChange.files in a large workspace
    [20, 20, 10_000, false, undefined],
    [21, 21, 10_000, true, 'mass-delete'], // deleting is judged more strictly
    [50, 0, 0, false, undefined], // a fresh workspace with no state: files only
    [60, 0, 0, true, 'mass-change'],
  ])('%i changed, %i deleted of %i tracked: pause %s', (changed, deleted, tracked, pause, reason) => {
    const decision = decideMassChange({ changed, deleted, tracked })
    expect(decision.pause).toBe(pause)
    if (decision.pause) {
      expect(decision.reason).toBe(reason)
      expect(decision.count).toBeGreaterThan(decision.threshold)
    }
  })

  test("massChange.files set below the floor is the user's choice: it counts as set", () => {
    const t = { massChange: { files: 2, percent: 0 }, massDelete: { files: 20, percent: 10 } }
    expect(decideMassChange({ changed: 3, deleted: 0, tracked: 100 }, t)).toMatchObject({ pause: true })
    expect(decideMassChange({ changed: 2, deleted: 0, tracked: 100 }, t)).toMatchObject({ pause: false })
  })

  test('1,000 files written at once reach the guard as a flood and pause pushing', async () => {
    const root = await tempWorkspace({ 'content/home.json': '{}\n' })
    const rec = await recordBatches(root, { maxBatchBeforeFlood: 200 })
    await mkdir(path.join(root, 'content/bulk'))
    const names = Array.from({ length: 1_000 }, (_, i) => `content/bulk/item-${i}.json`)
    await Promise.all(names.map((name) => writeFile(path.join(root, name), '{}\n')))
    await waitFor(() => rec.seen().size === 1_000, { timeoutMs: 8_000, what: '1,000 paths' })

    expect(rec.batches.length).toBeLessThanOrEqual(2) // judged (nearly) whole, not in slices
    const biggest = rec.batches.reduce((a, b) => (b.paths.size > a.paths.size ? b : a))
    expect(biggest.info.flood).toBe(true)
    const decision = decideMassChange({ changed: biggest.paths.size, deleted: 0, tracked: 1 })
    expect(decision).toMatchObject({ pause: true, reason: 'mass-change' })
  })
})

describe('change window', () => {
  test('slices of one bulk operation add up; a file saved again counts once; old slices drop out', () => {
    let clock = 0
    const window = createChangeWindow(10_000, () => clock)
    const slice = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => `content/p${from + i}.json`)
    expect(window.add(slice(0, 30), new Set())).toEqual({ changed: 30, deleted: 0 })
    clock += 2_000
    const second = slice(30, 30)
    expect(window.add(second, new Set(second.slice(0, 25)))).toEqual({ changed: 60, deleted: 25 })
    expect(decideMassChange({ ...window.add([], new Set()), tracked: 100 })).toMatchObject({
      pause: true,
      reason: 'mass-delete',
    })
    clock += 1_000
    expect(window.add(['content/p0.json'], new Set())).toEqual({ changed: 60, deleted: 25 })
    clock += 8_000 // the first slice (except p0, saved again) is now older than the window
    expect(window.add([], new Set())).toEqual({ changed: 31, deleted: 25 })
    window.clear()
    expect(window.add(['content/x.json'], new Set())).toEqual({ changed: 1, deleted: 0 })
  })
})

describe('the pause file', () => {
  test('set, read back, cleared by an explicit push or sync', async () => {
    const root = await tempWorkspace()
    expect(await readPause(root)).toBeUndefined()
    const decision = decideMassChange({ changed: 300, deleted: 0, tracked: 100 })
    if (!decision.pause) throw new Error('expected a pause')
    const paths = Array.from({ length: 300 }, (_, i) => `content/p${i}.json`)
    const info = pauseInfoFor(decision, paths)
    await setPause(root, info) // creates .cms-sync/ when missing
    expect(await readPause(root)).toEqual(info)
    expect(info.samplePaths).toHaveLength(20)
    expect(JSON.parse(await readFile(path.join(root, PAUSE_FILE), 'utf8'))).toMatchObject({ count: 300 })
    await clearPause(root)
    expect(await readPause(root)).toBeUndefined()
    await clearPause(root) // already clear: fine
  })

  test('a pause file that cannot be parsed still pauses', async () => {
    const root = await tempWorkspace({ [PAUSE_FILE]: '{"since": "2026-' })
    expect(await readPause(root)).toMatchObject({ reason: 'unreadable-pause-file' })
  })
})
