// What people see: the one-line summary, progress only on a terminal, logs in .cms-sync/logs
// without the token, and a clear stop when the token is refused.

import { readdir, readFile } from 'node:fs/promises'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, test } from 'vitest'
import { run } from '../../src/cli/program.js'
import { startWorld, syncedWorld, type World } from '../helpers/sync-world.js'

describe('output', () => {
  let world: World
  afterEach(async () => world?.close())

  test('a text run prints one line per item and a one-line summary; no progress off a terminal', async () => {
    world = await startWorld('spec')
    const result = await world.cli('sync')
    expect(result.exitCode).toBe(0)
    const lines = result.stdout.trim().split('\n')
    expect(lines.at(-1)).toBe('sync: applied 5, 0 conflicts, 0 failed')
    expect(lines.filter((l) => l.includes('pull'))).toHaveLength(5)
    expect(result.stderr).toBe('')
  })

  test('on a terminal, progress goes to stderr', async () => {
    world = await startWorld('spec')
    const stdout = new PassThrough()
    const stderr = Object.assign(new PassThrough(), { isTTY: true })
    const seen: string[] = []
    stderr.on('data', (b: Buffer) => seen.push(b.toString()))
    stdout.resume()
    const code = await run(['-C', world.root, 'sync'], {
      stdout,
      stderr,
      env: world.env,
      cwd: world.root,
      stopSignal: new Promise(() => {}),
    })
    expect(code).toBe(0)
    expect(seen.join('')).toMatch(/\[5\/5\].*pull/)
  })

  test('logs go to .cms-sync/logs and never hold the token', async () => {
    world = await syncedWorld('spec')
    const logs = await readdir(world.file('.cms-sync/logs'))
    const text = (
      await Promise.all(logs.map((f) => readFile(world.file(`.cms-sync/logs/${f}`), 'utf8')))
    ).join('')
    expect(text).toContain('"msg":"applied"')
    expect(text).not.toContain(world.emulator.token())
  })

  test('a refused token stops with exit 2 (the configuration to fix: log in) and says what to do, changing nothing', async () => {
    world = await syncedWorld('spec')
    const before = await world.tree()
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    const err: string[] = []
    stderr.on('data', (b: Buffer) => err.push(b.toString()))
    stdout.resume()
    const env = { ...world.env, CMS_SYNC_TOKEN: 'f'.repeat(40) }
    const code = await run(['-C', world.root, 'sync'], {
      stdout,
      stderr,
      env,
      cwd: world.root,
      stopSignal: new Promise(() => {}),
    })
    expect(code).toBe(2)
    expect(err.join('')).toMatch(/login/i)
    expect(await world.tree()).toEqual(before)
  })
})
