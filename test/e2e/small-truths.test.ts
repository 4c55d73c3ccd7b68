// The smaller truths a new user's trial found: every command says what it did not do, in the
// words and exit codes the others use. A path that matches nothing is a usage error (exit 2), a
// refused token is never "clean", and a file no run reads is named instead of passed over.

import { mkdir, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { contentOf, syncedWorld, type World } from '../helpers/sync-world.js'

let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

describe.each(['spec', 'upstream'] as const)('%s dialect', (dialect) => {
  test('restore of a path that matches nothing exits 2, like the other commands', async () => {
    world = await syncedWorld(dialect)
    const restore = await world.cli('restore', 'content/hoem.json')
    expect(restore.exitCode).toBe(2)
    expect(restore.stderr).toMatch(/"content\/hoem.json" did not match any file or server item/)
    // A real path without a local edit is still "nothing to restore", exit 0.
    const nothing = await world.cli('restore', 'content/home.json')
    expect(nothing.exitCode).toBe(0)
    expect(nothing.stderr).toMatch(/nothing to restore/)
  })

  test('a failure row always has its path, even for a server item no file can hold', async () => {
    world = await syncedWorld(dialect)
    const long = 'x'.repeat(300)
    await world.server.put('content', long, contentOf(long))
    const pull = await world.cli('--json', 'pull')
    expect(pull.exitCode).toBe(1)
    expect(pull.json.failed).toHaveLength(1)
    expect(pull.json.failed[0]).toMatchObject({ kind: 'content', id: long, path: 'content/' })
    expect(pull.json.failed[0].error).toMatch(/cannot be stored as a file/)
    const text = await world.cli('pull')
    expect(text.stdout).toMatch(/failed pull +content\/ +\(/)
  })

  test('a file in a nested folder or without .json is named as not synced, never "clean"', async () => {
    world = await syncedWorld(dialect)
    await mkdir(world.file('content/blog'), { recursive: true })
    await writeFile(world.file('content/blog/post.json'), '{"id": "post"}\n')
    await writeFile(world.file('content/about.JSON'), '{"id": "about"}\n')
    await writeFile(world.file('content/.DS_Store'), 'junk')
    const status = await world.cli('status')
    expect(status.exitCode).toBe(0)
    expect(status.stdout).not.toMatch(/^clean/m)
    expect(status.stdout).toMatch(/not synced +content\/blog\/: a folder: content\/ is flat/)
    expect(status.stdout).toMatch(/not synced +content\/about.JSON: .*does not end in .json/)
    expect(status.stdout).toMatch(/2 files are not synced/)
    expect(status.stdout).not.toMatch(/DS_Store/)
    const json = await world.cli('--json', 'status')
    expect(json.json.notSynced.map((s: { path: string }) => s.path)).toEqual([
      'content/about.JSON',
      'content/blog/',
    ])
  })
})

test('a refused token never prints "clean", even when nothing changed (upstream reads anonymously)', async () => {
  world = await syncedWorld('upstream')
  world.extraEnv.CMS_SYNC_TOKEN = 'f'.repeat(40)
  const status = await world.cli('status')
  expect(status.exitCode).toBe(2)
  expect(status.stdout).not.toMatch(/clean/)
  expect(status.stdout).toMatch(/the token is refused/)
  const json = await world.cli('--json', 'status')
  expect(json.json.clean).toBe(false)
  expect(json.json.token.refused).toMatch(/cms-sync login/)
})
