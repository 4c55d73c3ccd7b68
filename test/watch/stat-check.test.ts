// The stat look every poll takes (src/workspace/stat-check.ts): which synced paths moved since
// the last look, read from real folders.

import { mkdir, rename, rm, unlink, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, test } from 'vitest'
import { loadIgnoreRules } from '../../src/workspace/ignore-rules.js'
import { watchStats } from '../../src/workspace/stat-check.js'
import { tempWorkspace } from './helpers.js'

const seed = {
  'content/home.json': '{}\n',
  'content/about.json': '{}\n',
  'schemas/page.json': '{}\n',
  'media/img/logo.svg': '<svg/>',
  'media.yaml': 'items: []\n',
  'README.md': 'not synced\n',
}

async function statsOf(root: string) {
  const rules = await loadIgnoreRules(root)
  return watchStats(root, ['content', 'schema', 'media'], (rel, isDir) => rules.ignores(rel, isDir))
}

test('the first look reports every synced file; a look with nothing changed reports none', async () => {
  const root = await tempWorkspace(seed)
  const stats = await statsOf(root)
  expect(await stats.look(100)).toEqual({
    moved: new Set([
      'content/home.json',
      'content/about.json',
      'schemas/page.json',
      'media/img/logo.svg',
      'media.yaml',
    ]),
    overflow: false,
  })
  expect(await stats.look(100)).toEqual({ moved: new Set(), overflow: false })
})

test('an edit, a new file, a deletion, a rename and a folder moved away are the paths that moved', async () => {
  const root = await tempWorkspace(seed)
  const stats = await statsOf(root)
  await stats.look(100)
  await writeFile(path.join(root, 'content/home.json'), '{"title":"edited"}\n')
  await writeFile(path.join(root, 'content/new.json'), '{}\n')
  await unlink(path.join(root, 'schemas/page.json'))
  await rename(path.join(root, 'content/about.json'), path.join(root, 'content/about-us.json'))
  await rename(path.join(root, 'media/img'), path.join(root, 'outside'))
  expect((await stats.look(100)).moved).toEqual(
    new Set([
      'content/home.json',
      'content/new.json',
      'schemas/page.json',
      'content/about.json',
      'content/about-us.json',
      'media/img/logo.svg',
    ]),
  )
  expect((await stats.look(100)).moved).toEqual(new Set())
})

test('a change that keeps the size shows by its mtime; a file replaced by a folder moved too', async () => {
  const root = await tempWorkspace(seed)
  const stats = await statsOf(root)
  await stats.look(100)
  await utimes(path.join(root, 'content/home.json'), new Date(2020, 0, 1), new Date(2020, 0, 1))
  await rm(path.join(root, 'content/about.json'))
  await mkdir(path.join(root, 'content/about.json'))
  expect((await stats.look(100)).moved).toEqual(new Set(['content/home.json', 'content/about.json']))
})

test('ignored files and unsynced folders never move; past the limit the look says so', async () => {
  const root = await tempWorkspace(seed)
  const stats = await statsOf(root)
  await stats.look(100)
  await writeFile(path.join(root, 'content/home.json.tmp'), 'temp')
  await writeFile(path.join(root, 'README.md'), 'edited')
  await mkdir(path.join(root, 'docs'))
  await writeFile(path.join(root, 'docs/x.json'), '{}')
  expect((await stats.look(100)).moved).toEqual(new Set())
  for (let i = 0; i < 5; i++) await writeFile(path.join(root, `content/n${i}.json`), '{}')
  const look = await stats.look(3)
  expect(look.overflow).toBe(true)
  expect(look.moved.size).toBe(3)
})
