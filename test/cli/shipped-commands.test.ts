// Every command of the shipped program (dist/cli/main.js) runs here at least once, as a child
// process against a real emulator: the bundle splits lazily loaded code into chunks and wraps
// CommonJS packages, which the in-process tests (vitest loading src/) never exercise. The last
// test fails when a command is added without a run here.

import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import type { Command } from 'commander'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildProgram } from '../../src/cli/program.js'
import { MAIN_JS } from '../helpers/build.js'
import { type BuiltRun, runBuilt } from '../helpers/built-cli.js'
import { startWorld, type World } from '../helpers/sync-world.js'
import { setWatchConfig, watchProcess } from '../helpers/watch.js'

const ran = new Set<string>()
let world: World
let env: NodeJS.ProcessEnv

/** Runs the built CLI in the workspace and records which command it ran. */
async function shipped(
  command: string,
  args: string[],
  opts: { cwd?: string; stdin?: string; env?: NodeJS.ProcessEnv } = {},
) {
  ran.add(command)
  return runBuilt(args, {
    cwd: opts.cwd ?? world.root,
    env: opts.env ?? env,
    ...(opts.stdin === undefined ? {} : { stdin: opts.stdin }),
  })
}

/** No run may end in an internal error (a crash of the bundle, not of the user's input). */
function expectNoCrash(result: BuiltRun): void {
  expect(result.stderr).not.toContain('internal error')
  expect(result.stderr).not.toMatch(/\n\s+at /)
}

beforeAll(async () => {
  world = await startWorld('spec')
  await world.server.put('form', 'contact', {
    id: 'contact',
    title: 'Contact',
    allowedOrigin: '',
    redirect: '',
    appendRedirect: false,
    inputs: { name: { type: 'text', required: true } },
  })
  env = { ...world.env, NO_COLOR: '1' }
}, 60_000)

afterAll(async () => {
  await world?.close()
})

// Each test starts a few Node processes: on a loaded 2-core machine that takes seconds apiece.
describe('the shipped CLI', { timeout: 120_000 }, () => {
  test('--version and --help', async () => {
    const version = await shipped('--version', ['--version'])
    expect(version.stdout.trim()).toBe('0.1.0')
    const help = await shipped('--help', ['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: cms-sync')
  })

  test('init writes cms-sync.yaml for a server it reaches', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-shipped-init-'))
    const result = await shipped('init', [
      'init',
      dir,
      '--server',
      world.emulator.url,
      '--project',
      'demo',
      '--environment',
      'live',
    ])
    expectNoCrash(result)
    expect(result.code).toBe(0)
    expect(await readFile(path.join(dir, 'cms-sync.yaml'), 'utf8')).toContain('project: "demo"')
  })

  let xdg = ''
  test('login reads the password from stdin and stores the token', async () => {
    xdg = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-shipped-xdg-'))
    ran.add('login')
    const result = await runBuilt(['login', '--username', 'admin', '--password-stdin'], {
      cwd: world.root,
      env: { XDG_CONFIG_HOME: xdg, NO_COLOR: '1' },
      stdin: 'admin\n',
    })
    expectNoCrash(result)
    expect(result.code).toBe(0)
    expect(await readFile(path.join(xdg, 'cms-sync', 'credentials.yaml'), 'utf8')).toContain('token')
  })

  test('whoami, then logout', async () => {
    const who = await shipped('whoami', ['whoami'], { env: { XDG_CONFIG_HOME: xdg, NO_COLOR: '1' } })
    expectNoCrash(who)
    expect(who.stdout).toContain('as admin')
    const out = await shipped('logout', ['logout'], { env: { XDG_CONFIG_HOME: xdg, NO_COLOR: '1' } })
    expectNoCrash(out)
    expect(out.code).toBe(0)
    expect(out.stdout).toContain('logged out of')
  })

  test('completion bash is a script bash accepts', async () => {
    const result = await shipped('completion', ['completion', 'bash'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('complete -o filenames -F _cms_sync cms-sync')
  })

  test('pull, status, diff, push, sync', async () => {
    const pull = await shipped('pull', ['pull'])
    expectNoCrash(pull)
    expect(pull.code).toBe(0)
    await world.editJson('content/home.json', { properties: { title: 'Edited' } })
    const status = await shipped('status', ['status', '--json'])
    expect(status.code).toBe(0)
    expect(status.json.changes).toMatchObject([{ path: 'content/home.json', action: 'push' }])
    const diff = await shipped('diff', ['diff'])
    expectNoCrash(diff)
    expect(diff.stdout).toContain('Edited')
    const push = await shipped('push', ['push'])
    expect(push.code).toBe(0)
    await world.setContent('news', { properties: { title: 'From the server' } })
    const sync = await shipped('sync', ['sync', '--json'])
    expect(sync.code).toBe(0)
    expect(sync.json.applied).toMatchObject([{ path: 'content/news.json', action: 'pull' }])
  })

  test('resolve settles a conflict', async () => {
    await world.editJson('content/contact.json', { properties: { title: 'Local' } })
    await world.setContent('contact', { properties: { title: 'Remote' } })
    const conflict = await runBuilt(['sync'], { cwd: world.root, env })
    expect(conflict.code).toBe(3)
    const resolve = await shipped('resolve', ['resolve', 'content/contact.json', '--keep', 'local'])
    expectNoCrash(resolve)
    expect(resolve.code).toBe(0)
    expect(await world.readJson('content/contact.json')).toMatchObject({ properties: { title: 'Local' } })
  })

  test('restore drops a local edit', async () => {
    await world.editJson('content/home.json', { properties: { title: 'Unwanted' } })
    const result = await shipped('restore', ['restore', 'content/home.json'])
    expectNoCrash(result)
    expect(result.code).toBe(0)
    expect(await world.readJson('content/home.json')).toMatchObject({ properties: { title: 'Edited' } })
  })

  test('entries exports a form', async () => {
    const result = await shipped('entries', ['entries', 'contact', '--format', 'json'])
    expectNoCrash(result)
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual([])
  })

  test('promote names the missing parent project', async () => {
    const result = await shipped('promote', ['promote', 'content/home.json'])
    expectNoCrash(result)
    expect(result.code).not.toBe(0)
    expect(result.stdout).toMatch(/inherits from no parent/)
  })

  test('doctor checks the server and the token', async () => {
    const result = await shipped('doctor', ['doctor'])
    expectNoCrash(result)
    expect(result.code).toBe(0)
  })

  test('server-config set and get (YAML in and out)', async () => {
    const file = path.join(world.root, '..', 'section.yaml')
    await writeFile(file, 'greeting: hello\nlimits:\n  max: 3\n')
    const set = await shipped('server-config set', ['server-config', 'set', 'site', file])
    expectNoCrash(set)
    expect(set.code).toBe(0)
    const get = await shipped('server-config get', ['server-config', 'get', 'site'])
    expectNoCrash(get)
    expect(get.code).toBe(0)
    expect(get.stdout).toContain('greeting: hello')
    expect(get.stdout).toContain('max: 3')
  })

  test('watch starts, reports ready and stops on SIGTERM', async () => {
    ran.add('watch')
    await setWatchConfig(world.root)
    const daemon = watchProcess(world.root, env)
    await daemon.waitForEvent({ event: 'ready' }, 15_000)
    // The local page's files are served from dist/ beside the bundle.
    const { url } = await daemon.waitForEvent({ event: 'page' })
    expect((await fetch(`${url}page.js`)).status).toBe(200)
    daemon.child.kill('SIGTERM')
    expect((await daemon.exited).code).toBe(0)
    expect(daemon.stderr()).not.toContain('internal error')
  })

  test('ui serves the page and stops on SIGTERM', async () => {
    ran.add('ui')
    const child = spawn(process.execPath, [MAIN_JS, 'ui'], {
      cwd: world.root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    let out = ''
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (c) => {
        out += String(c)
        const m = /the page: (http:\/\/127\.0\.0\.1:\d+\/s\/[\w-]+\/)/.exec(out)
        if (m) resolve(m[1]!)
      })
      void exited.then((code) => reject(new Error(`cms-sync ui exited with ${code}`)))
    })
    const page = await fetch(url)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('page.js')
    expect((await fetch(`${url}page.js`)).status).toBe(200)
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
  })

  test('emulator listens and stops on SIGTERM', async () => {
    ran.add('emulator')
    const data = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-shipped-emu-'))
    await mkdir(data, { recursive: true })
    const child = spawn(process.execPath, [MAIN_JS, 'emulator', '--port', '0', '--data', data], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    let out = ''
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c) => {
        out += String(c)
        if (/listening on http:\/\/127\.0\.0\.1:\d+\n/.test(out)) resolve()
      })
      void exited.then((code) => reject(new Error(`the emulator exited with ${code}`)))
    })
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
  })

  test('every command of the program ran above', async () => {
    const sink = new PassThrough()
    const program = await buildProgram(
      { stdout: sink, stderr: sink, env: {}, cwd: os.tmpdir(), stopSignal: new Promise(() => {}) },
      () => {},
    )
    const leaves = (cmd: Command, prefix: string): string[] =>
      cmd.commands.length === 0
        ? [prefix]
        : cmd.commands.flatMap((c) => leaves(c, prefix ? `${prefix} ${c.name()}` : c.name()))
    const all = program.commands.flatMap((c) => leaves(c, c.name()))
    expect(all.filter((name) => !ran.has(name))).toEqual([])
  })
})
