// `cms-sync watch` as it runs all day: its token expires (a `cms-sync login` in another
// terminal must be enough), the server is down when it starts, a pause shows in status and
// doctor, its thresholds come from cms-sync.yaml, and it names the command that lifts a pause.
// The daemon is the built program in a child process, as users run it.

import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { cli } from '../helpers/cli.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'
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
