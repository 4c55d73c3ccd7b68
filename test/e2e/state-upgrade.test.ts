// A workspace whose state an earlier version kept in one file, .cms-sync/state.json, meets this
// one (the state in .cms-sync/state/, record-store.ts). Version 2 is read once and converted by
// the next run that saves, every record kept. Version 1 (the pre-release form whose bases were
// of files with sorted keys) is read as absent: the committed lock gives every item whose two
// sides still agree its base again, and nothing on either side is lost.

import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { loadState, type StateFile } from '../../src/state/state-file.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'

let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

/** Puts the state back in the single file an earlier version kept, as that version left it. */
async function toSingleFile(
  w: World,
  version: 1 | 2,
  change?: (state: StateFile) => void,
): Promise<StateFile> {
  const state = (await loadState(w.root))!
  change?.(state)
  await rm(w.file('.cms-sync/state'), { recursive: true, force: true })
  await writeFile(w.file('.cms-sync/state.json'), JSON.stringify({ ...state, version }))
  return state
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
    cwd,
    stdio: 'pipe',
  }).toString()

describe.each(['spec', 'upstream'] as const)('%s: a state an earlier version kept in one file', (dialect) => {
  test('version 2 is read as it is, and converted by the next run that saves, every record kept', async () => {
    world = await syncedWorld(dialect)
    const w = world
    const before = await toSingleFile(w, 2)
    const idle = await w.cli('--json', 'status')
    expect(idle.exitCode, idle.stderr).toBe(0)
    expect(idle.json.changes).toEqual([])
    // status writes nothing: the old file is still the state.
    expect(existsSync(w.file('.cms-sync/state.json'))).toBe(true)
    expect(existsSync(w.file('.cms-sync/state'))).toBe(false)

    await w.editJson('content/home.json', { properties: { title: 'Edited' } })
    const push = await w.cli('--json', 'push')
    expect(push.exitCode, push.stderr).toBe(0)
    expect(existsSync(w.file('.cms-sync/state.json'))).toBe(false)
    const after = (await loadState(w.root))!
    expect(after.target).toEqual(before.target)
    expect(Object.keys(after.items).sort()).toEqual(Object.keys(before.items).sort())
    // Every record but the pushed one as it was, its stat cache included.
    for (const [path, item] of Object.entries(before.items))
      if (path !== 'content/home.json') expect(after.items[path], path).toEqual(item)
    expect(after.items['content/home.json']?.baseHash).not.toBe(before.items['content/home.json']?.baseHash)
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])
  })

  test('version 1 is read as absent: the committed lock adopts the items both sides agree on, and no edit is lost', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await writeFile(w.file('.gitignore'), '.cms-sync/\n')
    git(w.root, 'init', '-q', '-b', 'main')
    git(w.root, 'add', '.')
    git(w.root, 'commit', '-qm', 'site')
    // What the sorted-keys version left: its bases in the form it recorded (marked so).
    await toSingleFile(w, 1, (state) => {
      for (const item of Object.values(state.items))
        Object.assign(item, { sortedBase: true, remoteRev: 'old' })
    })
    await w.editJson('content/home.json', { properties: { title: 'Local edit' } })
    await w.setContent('news', { properties: { title: 'Server edit' } })

    const status = await w.cli('--json', 'status')
    expect(status.exitCode, status.stderr).toBe(0)
    expect(status.json.changes).toEqual([
      expect.objectContaining({
        path: 'content/home.json',
        local: 'modified',
        remote: 'unchanged',
        action: 'push',
      }),
      expect.objectContaining({
        path: 'content/news.json',
        local: 'unchanged',
        remote: 'modified',
        action: 'pull',
      }),
    ])

    const pull = await w.cli('--json', 'pull')
    expect(pull.exitCode, pull.stderr).toBe(0)
    expect(pull.json.conflicts).toEqual([])
    expect(await w.readJson('content/news.json')).toMatchObject({ properties: { title: 'Server edit' } })
    // The local edit is still the file's, and still to push; the old state is gone.
    expect(await w.readJson('content/home.json')).toMatchObject({ properties: { title: 'Local edit' } })
    expect(existsSync(w.file('.cms-sync/state.json'))).toBe(false)
    expect((await w.cli('--json', 'status')).json.changes).toEqual([
      expect.objectContaining({ path: 'content/home.json', action: 'push' }),
    ])
    const push = await w.cli('--json', 'push')
    expect(push.exitCode, push.stderr).toBe(0)
    expect((await w.server.get('content', 'home'))?.properties).toMatchObject({ title: 'Local edit' })
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])
    const state = (await loadState(w.root))!
    expect(Object.values(state.items).filter((item) => 'sortedBase' in item)).toEqual([])
  })
})
