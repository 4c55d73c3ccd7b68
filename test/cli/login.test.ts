import { mkdtemp, readFile, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { writeNewConfig } from '../../src/config/config.js'
import { credentialsPath, resolveToken } from '../../src/config/credentials.js'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import { whoAmI } from '../../src/remote/index.js'
import { cli } from '../helpers/cli.js'

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  expect(condition()).toBe(true)
}

describe.each(['spec', 'upstream'] as const)('cms-sync login (%s)', (dialect) => {
  let em: Emulator
  let cwd: string
  let env: NodeJS.ProcessEnv

  beforeEach(async () => {
    em = await startEmulator({ dialect })
    cwd = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-login-'))
    env = { HOME: cwd, XDG_CONFIG_HOME: path.join(cwd, 'xdg') }
    await writeNewConfig(cwd, { server: em.url, project: 'demo', environment: 'live' })
  })
  afterEach(async () => {
    await em.close()
  })

  test('stores a working token for the workspace server, mode 0600, and never prints it', async () => {
    const r = await cli(['login', '--username', 'admin', '--password-stdin', '--persist'], {
      cwd,
      env,
      stdin: 'admin\n',
    })
    expect(r.stderr).toBe('')
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe(`logged in to ${em.url} as admin\n`)
    const token = await resolveToken(env, em.url)
    expect(token).toMatch(/^[0-9a-f]{40}$/)
    expect(r.stdout).not.toContain(token)
    expect((await stat(credentialsPath(env))).mode & 0o777).toBe(0o600)
    expect(await whoAmI({ server: em.url, token: token! })).toMatchObject({ username: 'admin' })
    // The log file of the workspace holds no token either.
    const log = await readFile(path.join(cwd, '.cms-sync', 'logs', 'cms-sync.log'), 'utf8').catch(() => '')
    expect(log).not.toContain(token)
  })

  test('--json prints {server, username}; -C and --server pick the target', async () => {
    const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-other-'))
    const r = await cli(['-C', cwd, 'login', '--json', '--username', 'admin', '--password-stdin'], {
      cwd: elsewhere,
      env,
      stdin: 'admin',
    })
    expect(r.exitCode).toBe(0)
    expect(r.json).toEqual({ server: em.url, username: 'admin' })
    const bare = await cli(['login', '--server', em.url, '--username', 'admin', '--password-stdin'], {
      cwd: elsewhere,
      env,
      stdin: 'admin',
    })
    expect(bare.exitCode).toBe(0)
  })

  test('on a terminal it asks for the user name and reads the password without echo', async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {} })
    const stderr: string[] = []
    const running = cli(['login'], { cwd, env, stdin, onStderr: (chunk) => stderr.push(chunk) })
    await until(() => stderr.join('').includes('Username: '))
    stdin.write('admin\r')
    // The prompt names the server the password goes to.
    await until(() => stderr.join('').includes(`Password for admin at ${em.url}: `))
    // Typed one key at a time, with a typo fixed by backspace.
    for (const key of ['a', 'd', 'x', '\u007f', 'm', 'i', 'n', '\r']) stdin.write(key)
    const r = await running
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe(`logged in to ${em.url} as admin\n`)
    // Nothing of the password is echoed: only the newline that ends the prompt.
    expect(r.stderr.split(`Password for admin at ${em.url}: `)[1]).toBe('\n')
    expect(await resolveToken(env, em.url)).toMatch(/^[0-9a-f]{40}$/)
  })

  test('a wrong password fails with exit 2 (a usage error: the input is wrong) and stores nothing', async () => {
    const r = await cli(['login', '--username', 'admin', '--password-stdin'], { cwd, env, stdin: 'wrong\n' })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/refused the login of "admin".*check the user name and password/)
    expect(r.stderr).not.toContain('wrong')
    expect(await resolveToken(env, em.url)).toBeUndefined()
  })
})

describe('cms-sync login usage errors', () => {
  test('without a terminal and without --password-stdin it exits 2 and says why', async () => {
    const cwd = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-login-'))
    await writeNewConfig(cwd, { server: 'http://127.0.0.1:9', project: 'demo', environment: 'live' })
    const r = await cli(['login', '--username', 'admin'], { cwd })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('--password-stdin')
    const noUser = await cli(['login', '--password-stdin'], { cwd, stdin: 'x' })
    expect(noUser.exitCode).toBe(2)
    expect(noUser.stderr).toContain('--username')
  })

  test('outside a workspace and without --server it exits 2', async () => {
    const cwd = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-nows-'))
    const r = await cli(['login', '--username', 'a', '--password-stdin'], { cwd, stdin: 'x' })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/no cms-sync.yaml.*\n.*--server/)
  })
})
