// The built CLI (scripts/build.mjs: one minified bundle with source maps) as users run it:
// `bin` starts, and an internal error still reports src/ files and lines, not bundle columns.

import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { expect, test } from 'vitest'
import { MAIN_JS } from '../helpers/build.js'
import { startWorld } from '../helpers/sync-world.js'

const run = async (args: string[], cwd: string, token = 'token') =>
  promisify(execFile)(process.execPath, [MAIN_JS, ...args], {
    cwd,
    env: { ...process.env, CMS_SYNC_TOKEN: token, NO_COLOR: '1' },
    // A process that does not end by itself (a thread or socket left holding it) fails here.
    timeout: 20_000,
  }).then(
    (done) => ({ code: 0, ...done }),
    (failed: { code: number; stdout: string; stderr: string }) => failed,
  )

test('package.json bin names the built entry, which starts with a node shebang', async () => {
  const pkg = JSON.parse(await readFile(path.resolve('package.json'), 'utf8')) as {
    bin: Record<string, string>
  }
  expect(path.resolve(pkg.bin['cms-sync']!)).toBe(MAIN_JS)
  expect((await readFile(MAIN_JS, 'utf8')).startsWith('#!/usr/bin/env node\n')).toBe(true)
  const version = await run(['--version'], os.tmpdir())
  expect(version.stdout.trim()).toBe('0.1.0')
})

test('an internal error names the TypeScript sources in its stack trace', async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-built-'))
  await writeFile(
    path.join(root, 'cms-sync.yaml'),
    'server: http://127.0.0.1:9\nproject: demo\nenvironment: live\ndialect: spec\n',
  )
  await mkdir(path.join(root, '.cms-sync'))
  // Any input the code does not expect will do: a state entry that is null instead of an item.
  const target = { server: 'http://127.0.0.1:9', project: 'demo', environment: 'live' }
  await writeFile(
    path.join(root, '.cms-sync', 'state.json'),
    JSON.stringify({ version: 2, target, items: { 'content/a.json': null } }),
  )
  const result = await run(['status'], root)
  expect(result.code).toBe(1)
  expect(result.stderr).toContain('cms-sync: internal error, please report it:')
  // The stack is in the workspace log (the terminal names it): with src/ lines, no bundle's
  const log = await readFile(path.join(root, '.cms-sync', 'logs', 'cms-sync.log'), 'utf8')
  expect(log).toMatch(/at .*src\/engine\/plan-and-apply\.ts:\d+:\d+/)
  expect(log).not.toContain('dist/cli/')
})

test('a pull process writes every file whole and ends by itself', async () => {
  const ids = Array.from({ length: 60 }, (_, i) => `page-${i}`)
  const world = await startWorld('spec', { content: ids })
  try {
    const result = await run(['pull'], world.root, world.emulator.token())
    expect(result.code).toBe(0)
    const files = await readdir(path.join(world.root, 'content'))
    expect(files.sort()).toEqual(ids.map((id) => `${id}.json`).sort())
    for (const id of ids) {
      expect(
        JSON.parse(await readFile(path.join(world.root, 'content', `${id}.json`), 'utf8')),
      ).toMatchObject({ id })
    }
  } finally {
    await world.close()
  }
})
