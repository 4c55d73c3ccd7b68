// What the log shows, as the shipped CLI writes it: `-v` gives readable lines on a terminal and
// pino's JSON lines in a pipe; .cms-sync/logs/cms-sync.log names the command of every run and
// holds the stack of a stop, which the terminal does not show; old logs and old trash go.

import { mkdir, mkdtemp, readdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { commandLineForLog } from '../../src/log/command-line.js'
import { loadState } from '../../src/state/state-file.js'
import { runBuilt, runBuiltInTty } from '../helpers/built-cli.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'

let world: World

beforeAll(async () => {
  world = await syncedWorld('spec')
}, 60_000)

afterAll(async () => {
  await world?.close()
})

const logFile = () => world.file('.cms-sync/logs/cms-sync.log')

/** The log's entries written by the process `pid`. */
async function entriesOf(pid: number | undefined): Promise<Array<Record<string, unknown>>> {
  const lines = (await readFile(logFile(), 'utf8')).trim().split('\n')
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((e) => e.pid === pid)
}

describe('-v', () => {
  test('on a terminal: one readable line per request (time, method, route, status, ms), no JSON', async () => {
    const result = await runBuiltInTty(['-v', 'status'], {
      cwd: world.root,
      env: { ...world.env, NO_COLOR: '1' },
    })
    expect(result.code).toBe(0)
    expect(result.output).toMatch(/^\d\d:\d\d:\d\d\.\d{3} GET \/api\/demo\/live\/content (200|304) \d+ms$/m)
    expect(result.output).toMatch(/^\d\d:\d\d:\d\d\.\d{3} run: cms-sync -v status /m)
    expect(result.output).not.toContain('{"level"')
    expect(result.output).toContain('clean: the workspace and the server agree')
  })

  test('in a pipe: pino JSON lines, one object per line, for tools', async () => {
    const result = await runBuilt(['-v', 'status'], { cwd: world.root, env: world.env })
    expect(result.code).toBe(0)
    const entries = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(entries).toContainEqual(
      expect.objectContaining({
        level: 20,
        msg: 'request',
        method: 'GET',
        route: '/api/demo/live/content',
        // 304 when the listing kept by the sync before is still current (docs/remote-client.md)
        status: expect.toBeOneOf([200, 304]),
        ms: expect.any(Number),
      }),
    )
    expect(result.stderr).not.toContain(world.emulator.token())
  })
})

describe('the log file', () => {
  test('names the command of each run, and its end', async () => {
    const result = await runBuilt(['--json', 'push', 'content/home.json'], {
      cwd: world.root,
      env: world.env,
    })
    expect(result.code).toBe(0)
    const entries = await entriesOf(await pidOfLastRun())
    expect(entries[0]).toMatchObject({
      msg: 'run: cms-sync --json push content/home.json',
      argv: ['--json', 'push', 'content/home.json'],
      cwd: world.root,
    })
    expect(entries.at(-1)).toMatchObject({ msg: 'run ended', exitCode: 0 })
  })

  test('an internal error: the stack (with src/ lines) in the log, not on the terminal', async () => {
    // Any input the code does not expect will do: a state entry that is null instead of an item,
    // in a state of the single-file form an earlier version kept (the folder stepped aside).
    const stateDir = world.file('.cms-sync/state')
    const legacy = world.file('.cms-sync/state.json')
    const state = (await loadState(world.root))!
    await rename(stateDir, `${stateDir}.aside`)
    await writeFile(
      legacy,
      JSON.stringify({ ...state, items: { ...state.items, 'content/home.json': null } }),
    )
    try {
      const result = await runBuilt(['status'], { cwd: world.root, env: world.env })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('cms-sync: internal error, please report it:')
      expect(result.stderr).toContain(`the stack trace is in ${logFile()}`)
      expect(result.stderr).not.toMatch(/^\s+at /m)
      const fatal = (await entriesOf(await pidOfLastRun())).find((e) => e.level === 60)
      expect(fatal).toMatchObject({ exitCode: 1, error: { type: 'TypeError' } })
      const stack = (fatal!.error as { stack: string }).stack
      expect(stack).toMatch(/at .*src\/engine\/plan-and-apply\.ts:\d+:\d+/)
      expect(stack).not.toContain('dist/cli/')
    } finally {
      await rm(legacy, { force: true })
      await rename(`${stateDir}.aside`, stateDir)
    }
  })

  test('a stop with exit 1 (the server cannot be reached): its message on the terminal, its stack in the log', async () => {
    const config = world.file('cms-sync.yaml')
    const saved = await readFile(config, 'utf8')
    // A port nothing listens on, as a server that went away. The state and lock are bound to the
    // emulator (the token goes to no other server): they step aside, as in a new workspace.
    const bindings = [world.file('.cms-sync/state'), world.file('cms-sync.lock')]
    for (const file of bindings) await rename(file, `${file}.aside`)
    await writeFile(config, saved.replace(/http:\/\/127\.0\.0\.1:\d+/, 'http://127.0.0.1:9'))
    try {
      const result = await runBuilt(['server-config', 'get', 'mail'], {
        cwd: world.root,
        env: world.env,
        timeoutMs: 60_000,
      })
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(/^cms-sync: .*could not reach http:\/\/127\.0\.0\.1:9/m)
      expect(result.stderr).not.toMatch(/^\s+at /m)
      const stop = (await entriesOf(await pidOfLastRun())).find((e) => e.level === 50)
      expect(stop).toMatchObject({
        exitCode: 1,
        msg: expect.stringMatching(/^stopped: .*could not reach/),
        error: { code: 'network' },
      })
      expect((stop!.error as { stack: string }).stack).toMatch(/\n\s+at /)
    } finally {
      await writeFile(config, saved)
      for (const file of bindings) await rename(`${file}.aside`, file)
    }
  }, 90_000)
})

test('an uncaught error (here: a timer of a module loaded into the process) while watch runs is logged with its stack; exit 1', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-crash-'))
  const crash = path.join(dir, 'crash.mjs')
  await writeFile(crash, "setTimeout(() => { throw new Error('boom from a timer') }, 1500)\n")
  const result = await runBuilt(['watch'], {
    cwd: world.root,
    env: { ...world.env, NODE_OPTIONS: `--import ${pathToFileURL(crash).href}` },
    timeoutMs: 30_000,
  })
  expect(result.code).toBe(1)
  expect(result.stderr).toContain('cms-sync: internal error, please report it: boom from a timer')
  expect(result.stderr).toContain(`the stack trace is in ${logFile()}`)
  expect(result.stderr).not.toMatch(/^\s+at /m)
  const fatal = (await entriesOf(await pidOfLastRun())).find((e) => e.level === 60)
  expect(fatal).toMatchObject({ exitCode: 1, msg: 'internal error: boom from a timer' })
  expect((fatal!.error as { stack: string }).stack).toContain('crash.mjs')
}, 40_000)

/** The pid of the newest run recorded in the log (each run's first line names it). */
async function pidOfLastRun(): Promise<number> {
  const lines = (await readFile(logFile(), 'utf8')).trim().split('\n')
  const runs = lines.map((line) => JSON.parse(line)).filter((e) => String(e.msg).startsWith('run: '))
  return runs.at(-1)!.pid as number
}

describe('retention', () => {
  const DAY = 24 * 60 * 60 * 1000
  const ageBy = async (file: string, days: number) => {
    const when = new Date(Date.now() - days * DAY)
    await utimes(file, when, when)
  }

  test('trash older than 30 days and logs of earlier days older than 14 go; younger ones stay', async () => {
    const trash = world.file('.cms-sync/trash')
    const logs = world.file('.cms-sync/logs')
    const runFolder = async (name: string, days: number) => {
      await mkdir(path.join(trash, name, 'content'), { recursive: true })
      const file = path.join(trash, name, 'content', 'home.json')
      await writeFile(file, '{}\n')
      await ageBy(file, days)
      await ageBy(path.join(trash, name, 'content'), days)
      await ageBy(path.join(trash, name), days)
    }
    await runFolder('2026-01-01T10-00-00-000Z', 31)
    await runFolder('2026-01-20T10-00-00-000Z', 29)
    // A folder written long ago, with one file in it written since: not old
    await runFolder('2026-01-02T10-00-00-000Z', 40)
    const since = path.join(trash, '2026-01-02T10-00-00-000Z', 'content', 'news.json')
    await writeFile(since, '{}\n')
    await ageBy(since, 3)
    await writeFile(path.join(logs, 'cms-sync-2026-01-01.log'), '{}\n')
    await ageBy(path.join(logs, 'cms-sync-2026-01-01.log'), 15)
    await writeFile(path.join(logs, 'cms-sync-2026-01-10.log'), '{}\n')
    await ageBy(path.join(logs, 'cms-sync-2026-01-10.log'), 13)
    // The current log, last written yesterday: moved aside under yesterday's date
    await ageBy(logFile(), 1)
    const yesterday = new Date(Date.now() - DAY).toISOString().slice(0, 10)

    const result = await runBuilt(['push'], { cwd: world.root, env: world.env })
    expect(result.code, result.stderr).toBe(0)
    expect((await readdir(trash)).sort()).toEqual(['2026-01-02T10-00-00-000Z', '2026-01-20T10-00-00-000Z'])
    expect((await readdir(logs)).sort()).toEqual(
      ['cms-sync-2026-01-10.log', `cms-sync-${yesterday}.log`, 'cms-sync.log'].sort(),
    )
    expect(await readFile(logFile(), 'utf8')).toMatch(/^\{.*"msg":"run: cms-sync push"/)
  })

  test('cms-sync.yaml retention keeps trash longer, and never shorter than 30 days', async () => {
    const config = world.file('cms-sync.yaml')
    const saved = await readFile(config, 'utf8')
    const trash = world.file('.cms-sync/trash')
    const old = path.join(trash, 'kept-longer')
    await mkdir(old, { recursive: true })
    await ageBy(old, 45)
    try {
      await writeFile(config, `${saved}retention: { trashDays: 60, logsDays: 3 }\n`)
      expect((await runBuilt(['push'], { cwd: world.root, env: world.env })).code).toBe(0)
      expect(await readdir(trash)).toContain('kept-longer')

      await writeFile(config, `${saved}retention: { trashDays: 7 }\n`)
      const refused = await runBuilt(['push'], { cwd: world.root, env: world.env })
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain(
        'cms-sync.yaml: retention.trashDays: expected a whole number of days from 30 to 36500 (trash is kept at least 30 days), got 7',
      )
      expect(await readdir(trash)).toContain('kept-longer')
    } finally {
      await writeFile(config, saved)
    }
  })
})

test('the command line in the log keeps every word but no secret', () => {
  expect(commandLineForLog(['emulator', '--user', 'ann:hunter2', '--port', '0'])).toEqual([
    'emulator',
    '--user',
    'ann:[redacted]',
    '--port',
    '0',
  ])
  expect(
    commandLineForLog(['login', '--server=https://ann:hunter2@cms.example', '--password-stdin']),
  ).toEqual(['login', '--server=https://ann:[redacted]@cms.example', '--password-stdin'])
  expect(commandLineForLog(['push', '--token', 'abc', '--api-key=def', 'content/home.json'])).toEqual([
    'push',
    '--token',
    '[redacted]',
    '--api-key=[redacted]',
    'content/home.json',
  ])
})
