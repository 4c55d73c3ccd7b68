// `cms-sync whoami` and `cms-sync logout` beside `login`: who the stored (or CMS_SYNC_TOKEN)
// token belongs to, and forgetting it, here and on the server.

import { mkdtemp, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { writeNewConfig } from '../../src/config/config.js'
import { resolveToken } from '../../src/config/credentials.js'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import { cli } from '../helpers/cli.js'

describe.each(['spec', 'upstream'] as const)('whoami and logout (%s)', (dialect) => {
  let em: Emulator
  let cwd: string
  let env: NodeJS.ProcessEnv

  beforeEach(async () => {
    em = await startEmulator({ dialect })
    cwd = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-whoami-'))
    env = { HOME: cwd, XDG_CONFIG_HOME: path.join(cwd, 'xdg') }
    await writeNewConfig(cwd, { server: em.url, project: 'demo', environment: 'live' })
  })
  afterEach(async () => {
    await em.close()
  })

  test('whoami names the user and where the token came from; logout forgets it and ends it on the server', async () => {
    const before = await cli(['whoami'], { cwd, env })
    expect(before.exitCode).toBe(2)
    expect(before.stderr).toContain(`not logged in to ${em.url}: run \`cms-sync login\``)

    expect(
      (await cli(['login', '--username', 'admin', '--password-stdin'], { cwd, env, stdin: 'admin\n' }))
        .exitCode,
    ).toBe(0)
    const token = (await resolveToken(env, em.url))!
    const who = await cli(['whoami'], { cwd, env })
    expect(who.stderr).toBe('')
    expect(who.exitCode).toBe(0)
    expect(who.stdout).toContain(`logged in to ${em.url} as admin`)
    expect(who.stdout).toContain(path.join(cwd, 'xdg', 'cms-sync', 'credentials.yaml'))
    expect(who.stdout).not.toContain(token)
    const json = await cli(['--json', 'whoami'], { cwd, env })
    expect(json.json).toMatchObject({ server: em.url, username: 'admin', source: 'credentials' })

    const out = await cli(['logout'], { cwd, env })
    expect(out.stderr).toBe('')
    expect(out.exitCode).toBe(0)
    expect(out.stdout).toContain(`logged out of ${em.url}`)
    // The server's 302 to its start page is how it says the token ended.
    expect(out.stdout).not.toMatch(/could not be told/)
    expect(await resolveToken(env, em.url)).toBeUndefined()
    expect(await readFile(path.join(cwd, 'xdg', 'cms-sync', 'credentials.yaml'), 'utf8')).not.toContain(token)
    // The token no longer works on the server either.
    const res = await fetch(`${em.url}/api/user`, { headers: { cookie: `token=${token}` } })
    expect(res.status).not.toBe(200)
    expect((await cli(['whoami'], { cwd, env })).exitCode).toBe(2)
    const again = await cli(['logout'], { cwd, env })
    expect(again.exitCode).toBe(0)
    expect(again.stdout).toContain(`not logged in to ${em.url}`)
  })

  test('whoami with CMS_SYNC_TOKEN says so; a refused token is exit 2', async () => {
    const ok = await cli(['whoami'], { cwd, env: { ...env, CMS_SYNC_TOKEN: em.token() } })
    expect(ok.exitCode).toBe(0)
    expect(ok.stdout).toContain('(token from CMS_SYNC_TOKEN)')
    const bad = await cli(['whoami'], { cwd, env: { ...env, CMS_SYNC_TOKEN: 'not-a-token-at-all' } })
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('is not valid (expired or revoked)')
  })
})
