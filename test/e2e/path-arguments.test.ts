// Path arguments count from the workspace under `-C` (as with git -C) and from the working
// folder otherwise, so `cms-sync -C site diff content/home.json` works from anywhere.

import path from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { cli } from '../helpers/cli.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'

let world: World
afterEach(async () => world?.close())

test('with -C, paths are relative to the workspace, wherever the command runs from', async () => {
  world = await syncedWorld('spec')
  await world.editJson('content/home.json', { properties: { title: 'local' } })
  const elsewhere = path.dirname(world.root)
  const run = await cli(['-C', world.root, '--json', 'status', 'content/home.json'], {
    cwd: elsewhere,
    env: world.env,
  })
  expect(run.stderr).toBe('')
  expect((run.json as { changes: Array<{ path: string }> }).changes.map((c) => c.path)).toEqual([
    'content/home.json',
  ])
})

test('without -C, paths are relative to the working folder inside the workspace', async () => {
  world = await syncedWorld('spec')
  await world.editJson('content/home.json', { properties: { title: 'local' } })
  const run = await cli(['--json', 'status', 'home.json'], {
    cwd: world.file('content'),
    env: world.env,
  })
  expect((run.json as { changes: Array<{ path: string }> }).changes.map((c) => c.path)).toEqual([
    'content/home.json',
  ])
  const outside = await cli(['-C', world.root, 'status', '../elsewhere.json'], {
    cwd: world.root,
    env: world.env,
  })
  expect(outside.exitCode).toBe(2)
  expect(outside.stderr).toMatch(/outside the workspace/)
})
