// `cms-sync watch` as it runs all day: its token expires (a `cms-sync login` in another
// terminal must be enough), the server is down when it starts, a pause shows in status and
// doctor, its thresholds come from cms-sync.yaml, and it names the command that lifts a pause.
// The daemon is the built program in a child process, as users run it.

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import { createRemoteClient } from '../../src/remote/index.js'
import { cli } from '../helpers/cli.js'
import { contentFile, contentOf, SECTION_SCHEMA } from '../helpers/fixtures.js'
import { syncedWorld, type World, writeConfig } from '../helpers/sync-world.js'
import { serverTitle, setWatchConfig, watchProcess } from '../helpers/watch.js'

let world: World | undefined
const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  await world?.close()
  world = undefined
})

function daemon(root: string, env: NodeJS.ProcessEnv, args: string[] = []) {
  const d = watchProcess(root, env, args)
  cleanups.push(async () => {
    if (d.child.exitCode === null) d.child.kill('SIGTERM')
    await d.exited
  })
  return d
}

async function login(root: string, xdg: string): Promise<void> {
  const result = await cli(['-C', root, 'login', '--username', 'admin', '--password-stdin'], {
    cwd: root,
    env: { XDG_CONFIG_HOME: xdg },
    stdin: 'admin\n',
  })
  if (result.exitCode !== 0) throw new Error(`login failed: ${result.stderr}`)
}

describe('watch, all day', { timeout: 90_000 }, () => {
  test('an expired token is replaced by a `cms-sync login` in another terminal, without a restart', async () => {
    const w = await syncedWorld('spec')
    world = w
    const xdg = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-xdg-'))
    await login(w.root, xdg)
    const { readFile } = await import('node:fs/promises')
    const firstToken = /token: "([^"]+)"/.exec(
      await readFile(path.join(xdg, 'cms-sync', 'credentials.yaml'), 'utf8'),
    )![1]!
    await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
    // No CMS_SYNC_TOKEN: the daemon's token is the one `login` stored.
    const d = daemon(w.root, { XDG_CONFIG_HOME: xdg, CMS_SYNC_TOKEN: '' })
    await d.waitForEvent({ event: 'reconciled' }, 20_000)

    // The token ends (as it does after 8 hours): the daemon's next poll is refused.
    const ended = await fetch(`${w.emulator.url}/api/user/logout`, {
      method: 'POST',
      headers: { cookie: `token=${firstToken}` },
      redirect: 'manual',
    })
    expect(ended.status).toBe(302)
    const refused = await d.waitForEvent({ event: 'error' }, 20_000)
    expect(refused.message).toContain('refused the token')

    // A login elsewhere; the daemon carries on with the new token by itself.
    await login(w.root, xdg)
    await d.waitForEvent({ event: 'token-renewed' }, 20_000)
    await w.editJson('content/home.json', { properties: { title: 'After the new login' } })
    await expect.poll(() => serverTitle(w.server, 'home'), { timeout: 15_000 }).toBe('After the new login')
    expect(d.child.exitCode).toBeNull()
  })
})

describe('watch when the server is down', { timeout: 90_000 }, () => {
  test('starts anyway, says it is offline, and pushes the edits made meanwhile once the server is back', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-data-'))
    let emulator: Emulator = await startEmulator({ port: 0, dialect: 'spec', dataDir })
    cleanups.push(() => emulator.close())
    const { port, url } = emulator
    const token = emulator.token()
    const server = await createRemoteClient({
      server: url,
      project: 'demo',
      environment: 'live',
      token,
      dialect: 'spec',
      rateLimit: { requestsPerSecond: 1000, concurrency: 4 },
    })
    cleanups.push(() => server.close())
    await server.put('schema', 'section', SECTION_SCHEMA)
    await server.put('content', 'home', contentOf('home'))
    const root = path.join(await mkdtemp(path.join(os.tmpdir(), 'cms-sync-e2e-')), 'site')
    await mkdir(root)
    // dialect: auto, as `init` writes it: the first thing the client does is ask the server.
    await writeConfig(root, url, 'auto')
    const env = { CMS_SYNC_TOKEN: token, XDG_CONFIG_HOME: path.join(root, '..', 'xdg') }
    expect((await cli(['-C', root, 'sync'], { cwd: root, env })).exitCode).toBe(0)
    await setWatchConfig(root, { debounceMs: 50, pollSeconds: 1 })

    await emulator.close()
    const d = daemon(root, env)
    const offline = await d.waitForEvent({ event: 'offline' }, 30_000)
    expect(offline.error).toContain('could not reach')
    expect(d.child.exitCode).toBeNull()
    const file = path.join(root, 'content', 'home.json')
    await writeFile(
      file,
      `${JSON.stringify(contentFile('home', { properties: { title: 'Edited offline' } }), null, 2)}\n`,
    )

    emulator = await startEmulator({ port, dialect: 'spec', dataDir })
    await d.waitForEvent({ event: 'online' }, 40_000)
    await d.waitForEvent({ event: 'reconciled' }, 20_000)
    await expect.poll(() => serverTitle(server, 'home'), { timeout: 15_000 }).toBe('Edited offline')
  })
})

describe('a paused watcher', { timeout: 90_000 }, () => {
  test('pauses at the thresholds of cms-sync.yaml, shows in status and doctor, and names the commands that lift it', async () => {
    const w = await syncedWorld('spec')
    world = w
    const { readFile } = await import('node:fs/promises')
    const config = await readFile(w.file('cms-sync.yaml'), 'utf8')
    await writeFile(
      w.file('cms-sync.yaml'),
      // A debounce long enough that the three edits below reach the daemon as one batch.
      `${config}watch: { debounceMs: 1000, pollSeconds: 1, massChange: { files: 2, percent: 0 } }\n`,
    )
    const d = daemon(w.root, w.env)
    await d.waitForEvent({ event: 'reconciled' }, 20_000)
    // Three files at once: more than massChange.files (the default would be 50).
    await Promise.all(
      ['home', 'news', 'contact'].map((id) =>
        w.editJson(`content/${id}.json`, { properties: { title: `Bulk ${id}` } }),
      ),
    )
    const paused = await d.waitForEvent({ event: 'paused' }, 20_000)
    expect(paused).toMatchObject({ reason: 'mass-change', count: 3 })
    expect(await serverTitle(w.server, 'home')).toBe('home')

    const status = await w.cli('status')
    expect(status.stdout).toMatch(/watch paused pushing at .*: 3 files changed at once/)
    expect(status.stdout).toContain('run `cms-sync push` (which lifts the pause)')
    expect(status.stdout).toContain('`cms-sync restore <paths>` (works while watch runs)')
    const json = await w.cli('--json', 'status')
    expect(json.json.watchPaused).toMatchObject({ reason: 'mass-change', count: 3 })
    const doctor = await w.cli('doctor')
    expect(doctor.stdout).toMatch(/✗ watch +watch paused pushing/)
    expect(doctor.stdout).toContain('run `cms-sync push`')

    // The restore the message names works while the daemon runs, and drops the bulk edit.
    const restored = await w.cli('restore', 'content')
    expect(restored.stderr).toBe('')
    expect(restored.exitCode).toBe(0)
    expect(await w.readJson('content/news.json')).toMatchObject({ properties: { title: 'news' } })
  })

  test('deletions a guard holds name the exact commands, not a watch flag', async () => {
    const w = await syncedWorld('spec')
    world = w
    await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
    const d = daemon(w.root, w.env)
    await d.waitForEvent({ event: 'reconciled' }, 20_000)
    for (const id of ['home', 'news', 'contact']) await w.server.remove('content', id)
    const { held } = await d.waitForEvent({ event: 'held' }, 20_000)
    const paths = 'content/contact.json content/home.json content/news.json'
    expect(held).toEqual([
      expect.objectContaining({
        guard: 'max-delete',
        release: `cms-sync resolve --keep remote ${paths}`,
        drop: `cms-sync resolve --keep local ${paths}`,
      }),
    ])
    expect(JSON.stringify(held)).not.toContain('re-run with')
    expect(d.events.filter((e) => e.event === 'error')).toEqual([])
    expect(await w.exists('content/home.json')).toBe(true)
  })
})
