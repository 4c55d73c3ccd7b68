import { mkdir, mkdtemp, readdir, readFile, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { loadConfig } from '../../src/config/config.js'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import { cli } from '../helpers/cli.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'

const target = ['--server', 'http://127.0.0.1:9', '--project', 'demo', '--environment', 'live']
const tmp = () => mkdtemp(path.join(os.tmpdir(), 'cms-sync-init-'))

describe('cms-sync init --offline', () => {
  test('writes cms-sync.yaml and a .gitignore line, once', async () => {
    const cwd = await tmp()
    const first = await cli(['init', 'ws', ...target, '--offline'], { cwd })
    expect(first.exitCode).toBe(0)
    expect(first.stdout).toContain('wrote')
    const root = path.join(cwd, 'ws')
    expect(await loadConfig(root)).toMatchObject({
      server: 'http://127.0.0.1:9',
      project: 'demo',
      environment: 'live',
      dialect: 'auto',
    })
    expect(await readFile(path.join(root, '.gitignore'), 'utf8')).toBe('.cms-sync/\n')

    const again = await cli(['init', 'ws', ...target, '--offline'], { cwd })
    expect(again.exitCode).toBe(2)
    expect(again.stderr).toMatch(/already exists; use --force/)

    const forced = await cli(['init', 'ws', ...target, '--offline', '--force', '--dialect', 'upstream'], {
      cwd,
    })
    expect(forced.exitCode).toBe(0)
    expect((await loadConfig(root)).dialect).toBe('upstream')
    expect(await readFile(path.join(root, '.gitignore'), 'utf8')).toBe('.cms-sync/\n')
  })

  test('inside an existing workspace it refuses: the outer one would sync the new cms-sync.yaml as a file', async () => {
    const cwd = await tmp()
    expect((await cli(['init', ...target, '--offline'], { cwd })).exitCode).toBe(0)
    for (const inner of ['media/site', 'docs']) {
      const result = await cli(['init', inner, ...target, '--offline'], { cwd })
      expect(result.exitCode).toBe(2)
      expect(result.stderr).toContain(`${path.join(cwd, inner)} is inside the workspace ${cwd}`)
      await expect(readFile(path.join(cwd, inner, 'cms-sync.yaml'))).rejects.toThrow(/ENOENT/)
    }
  })

  test('appends to an existing .gitignore without a trailing newline', async () => {
    const cwd = await tmp()
    await writeFile(path.join(cwd, '.gitignore'), 'node_modules')
    const r = await cli(['-C', '.', 'init', ...target, '--offline', '--json'], { cwd })
    expect(r.exitCode).toBe(0)
    expect(r.json).toMatchObject({ root: cwd, project: 'demo', checked: false })
    expect(await readFile(path.join(cwd, '.gitignore'), 'utf8')).toBe('node_modules\n.cms-sync/\n')
  })

  test('a .gitignore or cms-sync.yaml that is a symbolic link is refused, and nothing is written through it', async () => {
    for (const name of ['.gitignore', 'cms-sync.yaml']) {
      const cwd = await tmp()
      const outside = await tmp()
      await writeFile(path.join(outside, 'target'), "# someone else's file\n")
      await mkdir(path.join(cwd, 'ws'))
      await symlink(path.join(outside, 'target'), path.join(cwd, 'ws', name))
      const r = await cli(['init', 'ws', ...target, '--offline', '--force'], { cwd })
      expect(r.exitCode, r.stderr).toBe(2)
      expect(r.stderr).toContain(`${name}: a symbolic link`)
      expect(await readFile(path.join(outside, 'target'), 'utf8')).toBe("# someone else's file\n")
      expect((await readdir(path.join(cwd, 'ws'))).sort()).toEqual([name])
    }
  })

  test('bad values are usage errors and write nothing', async () => {
    const cwd = await tmp()
    const r = await cli(
      ['init', '--server', 'ftp://x', '--project', 'p', '--environment', 'e', '--offline'],
      { cwd },
    )
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('server: expected an http')
    const missing = await cli(['init', '--project', 'p', '--environment', 'e'], { cwd })
    expect(missing.exitCode).toBe(2)
    const badDialect = await cli(['init', ...target, '--dialect', 'soap'], { cwd })
    expect(badDialect.exitCode).toBe(2)
    await expect(readFile(path.join(cwd, 'cms-sync.yaml'))).rejects.toThrow()
  })
})

describe('cms-sync init, checking the server', () => {
  let emulator: Emulator | undefined
  afterEach(async () => {
    await emulator?.close()
  })

  test('an unreachable server fails and points at --offline', async () => {
    const cwd = await tmp()
    const r = await cli(['init', ...target], { cwd })
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toContain('--offline')
  })

  test('an unknown project is refused before anything is written, naming the ones that exist', async () => {
    emulator = await startEmulator({ port: 0 })
    const cwd = await tmp()
    const env = { CMS_SYNC_TOKEN: emulator.token() }
    const r = await cli(['init', '--server', emulator.url, '--project', 'other', '--environment', 'live'], {
      cwd,
      env,
    })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('no project "other"; pass --project one of: demo')
    await expect(readFile(path.join(cwd, 'cms-sync.yaml'))).rejects.toThrow()
  })

  test('a known target is written, with the dialect the server speaks', async () => {
    emulator = await startEmulator({ port: 0 })
    const cwd = await tmp()
    const env = { CMS_SYNC_TOKEN: emulator.token() }
    const r = await cli(['init', '--server', emulator.url, '--project', 'demo', '--environment', 'live'], {
      cwd,
      env,
    })
    expect(r.stderr).toBe('')
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('spec dialect')
  })

  test('without a token the target cannot be confirmed: written, with a hint to log in', async () => {
    emulator = await startEmulator({ port: 0 })
    const cwd = await tmp()
    const r = await cli(['init', '--server', emulator.url, '--project', 'demo', '--environment', 'live'], {
      cwd,
    })
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('not logged in yet: run `cms-sync login` next')
  })

  test('a target the server will not confirm for another reason is written, with that reason, not a login hint', async () => {
    emulator = await startEmulator({ port: 0 })
    const proxy = await startCountingProxy(emulator.url)
    try {
      proxy.override = (method, route) =>
        method === 'GET' && route.endsWith('/environments')
          ? { status: 403, body: 'Forbidden for this user' }
          : undefined
      const cwd = await tmp()
      const env = { CMS_SYNC_TOKEN: emulator.token() }
      const r = await cli(['init', '--server', proxy.url, '--project', 'demo', '--environment', 'live'], {
        cwd,
        env,
      })
      expect(r.exitCode).toBe(0)
      expect(r.stdout).toContain(
        'could not confirm the target: the server would not list the environments of "demo" (403: Forbidden for this user)',
      )
      expect(r.stdout).not.toContain('not logged in')
    } finally {
      await proxy.close()
    }
  })
})
