// Watch never freezes and never goes silent: a guard tripped by a server change holds only
// what it is about (and says so in status, doctor and watch's events, with the commands that
// release or drop it) while everything else keeps syncing; an edit that raced a write is
// planned again, where the field merge applies.

import { afterEach, describe, expect, test } from 'vitest'
import { names } from '../../src/emulator/store.js'
import { type Dialect, startWorld, type World } from '../helpers/sync-world.js'
import { serverTitle, setWatchConfig, watchInProcess } from '../helpers/watch.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function world(dialect: Dialect, content?: string[]): Promise<World> {
  const w = await startWorld(dialect, content ? { content } : {})
  cleanups.push(() => w.close())
  const first = await w.cli('sync')
  if (first.exitCode !== 0) throw new Error(`the first sync failed: ${first.stderr}`)
  return w
}

describe.each(['spec', 'upstream'] as const)('watch never freezes (%s dialect)', (dialect) => {
  test('a both-sides edit of different fields that raced a write is merged by the next poll', async () => {
    const w = await world(dialect)
    const collection = names.env('demo', 'live', 'content')
    // The local edit is made while no daemon runs: the start-up reconcile (a full run) pushes it.
    await w.editJson('content/home.json', { properties: { title: 'local title' } })
    // Another client changes another field of the same item after the listing, just before the
    // executor's check of the item before its write.
    let fired = false
    w.proxy.override = (method, route) => {
      if (!fired && method === 'GET' && route.endsWith('/content/home')) {
        fired = true
        const current = w.emulator.store.get<Record<string, unknown>>(collection, 'home')!
        w.emulator.store.put(collection, 'home', {
          ...current,
          sort: 7,
          updateDate: new Date(Date.parse('2030-01-01T00:00:00Z')).toISOString(),
        })
      }
      return undefined
    }
    await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
    const d = watchInProcess(w.root, w.env)
    cleanups.push(() => d.stop())
    await d.waitForEvent({ event: 'reconciled' })
    expect(fired).toBe(true)
    expect(d.events).toContainEqual(expect.objectContaining({ event: 'conflict', path: 'content/home.json' }))
    // The next poll plans it again: both edits land on both sides.
    await d.waitForEvent({ event: 'merged', path: 'content/home.json' }, 10_000)
    expect(await serverTitle(w.server, 'home')).toBe('local title')
    expect((await w.server.get('content', 'home'))?.sort).toBe(7)
    expect(await w.readJson('content/home.json')).toMatchObject({
      sort: 7,
      properties: { title: 'local title' },
    })
    const status = await w.cli('--json', 'status')
    expect(status.json.changes).toEqual([])
  })
})
