// `cms-sync resolve` while `cms-sync watch` runs (design.md: "settles conflicts (also while
// watch runs)"). The daemon holds the workspace lock, so the resolve is carried out by the
// daemon: the user types one command and gets its usual report and exit code.

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

describe('resolve while watch runs', () => {
  test('a conflict the daemon reported is settled by `resolve --keep`, through the daemon', async () => {
    const w = await syncedWorld('spec')
    world = w
    // Given a conflict on two files, found by the daemon's start-up reconcile
    await w.editJson('content/home.json', { properties: { title: 'Local home' } })
    await w.setContent('home', { properties: { title: 'Remote home' } })
    await w.editJson('content/news.json', { properties: { title: 'Local news' } })
    await w.setContent('news', { properties: { title: 'Remote news' } })
    await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
    const daemon = watchProcess(w.root, w.env)
    stop = async () => {
      daemon.child.kill('SIGTERM')
      await daemon.exited
    }
    await daemon.waitForEvent({ event: 'conflict', path: 'content/home.json' }, 15_000)
    await daemon.waitForEvent({ event: 'reconciled' }, 15_000)

    // When the user resolves each, one command each, while the daemon runs
    const local = await w.cli('resolve', 'content/home.json', '--keep', 'local')
    expect(local.stderr).toBe('')
    expect(local.exitCode).toBe(0)
    expect(local.stdout).toContain('resolve: applied 1')
    const remote = await w.cli('--json', 'resolve', 'content/news.json', '--keep', 'remote')
    expect(remote.exitCode).toBe(0)
    expect(remote.json.applied).toMatchObject([{ path: 'content/news.json', action: 'pull' }])

    // Then both are settled, and the daemon goes on running and says so
    expect(await serverTitle(w.server, 'home')).toBe('Local home')
    expect(await w.readJson('content/news.json')).toMatchObject({ properties: { title: 'Remote news' } })
    await daemon.waitForEvent({ event: 'pushed', path: 'content/home.json' })
    expect(daemon.child.exitCode).toBeNull()
    // A later edit is still pushed by the daemon: it kept its lock and its state.
    await w.editJson('content/home.json', { properties: { title: 'After the resolve' } })
    await expect.poll(() => serverTitle(w.server, 'home'), { timeout: 8_000 }).toBe('After the resolve')

    // A path with no conflict is the usual usage error
    const none = await w.cli('resolve', 'content/shop.json', '--keep', 'local')
    expect(none.exitCode).toBe(2)
    expect(none.stderr).toContain('no conflicts in content/shop.json')
  })
})
