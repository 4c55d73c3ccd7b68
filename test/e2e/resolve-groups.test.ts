// `resolve` settles groups named as the page names them: a kind's folder, a folder, a pattern
// (`'content/h*'`, quoted so the shell leaves it); and single leaves while `watch` runs, which
// the daemon carries out on its own state.

import { afterEach, describe, expect, test } from 'vitest'
import { syncedWorld, type World } from '../helpers/sync-world.js'
import { serverTitle, setWatchConfig, watchProcess } from '../helpers/watch.js'

let world: World | undefined
let stop: (() => Promise<unknown>) | undefined
afterEach(async () => {
  await stop?.()
  stop = undefined
  await world?.close()
  world = undefined
})

async function conflicts(w: World, ids: string[]): Promise<void> {
  for (const id of ids) {
    await w.editJson(`content/${id}.json`, { properties: { title: `Local ${id}` }, sort: 2 })
    await w.setContent(id, { properties: { title: `Remote ${id}` }, sort: 3 })
  }
}

describe('resolve groups and leaves', () => {
  test('a pattern settles every conflict it matches, and only those', async () => {
    const w = await syncedWorld('spec')
    world = w
    await conflicts(w, ['home', 'news', 'shop'])
    const run = await w.cli('--json', 'resolve', 'content/[hn]*', '--keep', 'remote')
    // `[` is no pattern character here: a literal name that matches nothing is a usage error
    expect(run.exitCode).toBe(2)
    const some = await w.cli('--json', 'resolve', 'content/h*', 'content/n?ws.json', '--keep', 'remote')
    expect(some.exitCode).toBe(0)
    expect(some.json.applied.map((i: { path: string }) => i.path).sort()).toEqual([
      'content/home.json',
      'content/news.json',
    ])
    expect(await w.readJson('content/shop.json')).toMatchObject({ properties: { title: 'Local shop' } })
    const rest = await w.cli('--json', 'resolve', 'content', '--keep', 'local')
    expect(rest.json.applied.map((i: { path: string }) => i.path)).toEqual(['content/shop.json'])
    expect(await serverTitle(w.server, 'shop')).toBe('Local shop')
  })

  test('a single leaf is settled while watch runs, by the daemon', async () => {
    const w = await syncedWorld('spec')
    world = w
    await conflicts(w, ['home'])
    await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
    const daemon = watchProcess(w.root, w.env, ['--no-ui'])
    stop = daemon.stop
    await daemon.waitForEvent({ event: 'conflict', path: 'content/home.json' }, 15_000)
    await daemon.waitForEvent({ event: 'reconciled' }, 15_000)
    const run = await w.cli('--json', 'resolve', 'content/home.json#/sort', '--keep', 'remote')
    // The other leaf stays in conflict (exit 3), as when no daemon runs
    expect(run.stderr).toBe('')
    expect(run.exitCode).toBe(3)
    expect(run.json.conflicts).toMatchObject([
      { path: 'content/home.json', leaves: [{ path: '/properties/title' }] },
    ])
    expect(await w.readJson('content/home.json')).toMatchObject({
      sort: 3,
      properties: { title: 'Local home' },
    })
    expect(await w.server.get('content', 'home')).toMatchObject({
      sort: 3,
      properties: { title: 'Remote home' },
    })
    const status = await w.cli('--json', 'status')
    expect(status.json.changes[0].leaves.map((l: { path: string }) => l.path)).toEqual(['/properties/title'])
  })
})
