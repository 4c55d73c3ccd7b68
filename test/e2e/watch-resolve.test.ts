// `cms-sync resolve` while `cms-sync watch` runs (design.md: "settles conflicts (also while
// watch runs)"). The daemon holds the workspace lock, so the resolve is carried out by the
// daemon: the user types one command and gets its usual report and exit code.

import { execFileSync } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
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
    stop = daemon.stop
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

  test("a request a git checkout puts in .cms-sync/requests/ is not carried out: only this machine's cms-sync can ask", async () => {
    const w = await syncedWorld('spec')
    world = w
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {
        cwd: w.root,
        stdio: 'pipe',
      })
    await writeFile(w.file('.gitignore'), '.cms-sync/\n')
    git('init', '-q', '-b', 'main')
    git('add', '-A')
    git('commit', '-qm', 'synced')
    // A colleague's branch holds a request to the daemon, committed past .gitignore: "keep local
    // for every conflict", which would push this machine's side over an editor's change.
    const id = '1-1'
    await mkdir(w.file('.cms-sync/requests'), { recursive: true })
    await writeFile(
      w.file(`.cms-sync/requests/${id}.json`),
      JSON.stringify({ command: 'resolve', scope: ['content'], keep: 'local' }),
    )
    git('checkout', '-q', '-b', 'colleague')
    git('add', '-f', `.cms-sync/requests/${id}.json`)
    git('commit', '-qm', 'colleague')
    git('checkout', '-q', 'main')
    // A conflict the daemon reports, and the user's decision still open.
    await w.editJson('content/home.json', { properties: { title: 'Local home' } })
    await w.setContent('home', { properties: { title: 'Remote home' } })
    await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
    const daemon = watchProcess(w.root, w.env)
    stop = daemon.stop
    await daemon.waitForEvent({ event: 'conflict', path: 'content/home.json' }, 15_000)
    await daemon.waitForEvent({ event: 'reconciled' }, 15_000)

    // The user looks at the colleague's branch while watch runs.
    git('checkout', '-q', 'colleague')
    const reply = w.file(`.cms-sync/requests/${id}.reply.json`)
    await expect.poll(() => readFile(reply, 'utf8').catch(() => ''), { timeout: 15_000 }).not.toBe('')
    expect(await serverTitle(w.server, 'home')).toBe('Remote home')
    expect(JSON.parse(await readFile(reply, 'utf8'))).toMatchObject({ error: { exitCode: 2 } })
    expect(await w.readJson('content/home.json')).toMatchObject({ properties: { title: 'Local home' } })
    // The user's own resolve still goes through the daemon.
    const own = await w.cli('resolve', 'content/home.json', '--keep', 'remote')
    expect(own.exitCode, own.stderr).toBe(0)
    expect(await w.readJson('content/home.json')).toMatchObject({ properties: { title: 'Remote home' } })
  })
})
