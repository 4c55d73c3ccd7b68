// The built CLI (scripts/build.mjs: one minified bundle with source maps) as users run it:
// `bin` starts, and an internal error still reports src/ files and lines, not bundle columns.

import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { expect, test } from 'vitest'
import { MAIN_JS } from '../helpers/build.js'

const run = async (args: string[], cwd: string) =>
  promisify(execFile)(process.execPath, [MAIN_JS, ...args], {
    cwd,
    env: { ...process.env, CMS_SYNC_TOKEN: 'token', NO_COLOR: '1' },
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
    JSON.stringify({ version: 1, target, items: { 'content/a.json': null } }),
  )
  const result = await run(['status'], root)
  expect(result.code).toBe(1)
  expect(result.stderr).toContain('cms-sync: internal error, please report it:')
  expect(result.stderr).toMatch(/at .*src\/engine\/run\.ts:\d+:\d+/)
  expect(result.stderr).not.toContain('dist/cli/')
})
