// `cms-sync restore <paths...>`: drops local edits, the file gets the server copy, and the
// dropped edit is kept in .cms-sync/trash/ (design.md). Only the named paths change; the
// server is never written to.

import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { contentFile } from '../helpers/fixtures.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'

let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

/** Every file under .cms-sync/trash/, as trash-relative path -> text. */
async function trash(w: World): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  const walk = async (dir: string, rel: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) await walk(full, rel ? `${rel}/${entry.name}` : entry.name)
      else out[`${rel}/${entry.name}`.replace(/^[^/]+\//, '')] = await readFile(full, 'utf8')
    }
  }
  await walk(w.file('.cms-sync/trash'), '')
  return out
}

describe.each(['spec', 'upstream'] as const)('restore (%s dialect)', (dialect) => {
  test('an edited, a deleted and a new file get the server copy; the edits go to trash', async () => {
    const w = await syncedWorld(dialect)
    world = w
    const serverBefore = await w.serverState()
    await w.editJson('content/home.json', { properties: { title: 'My local edit' } })
    await w.remove('content/news.json')
    await w.writeJson('content/draft.json', contentFile('draft'))
    await w.editJson('content/shop.json', { properties: { title: 'Not restored' } })
    const edited = await readFile(w.file('content/home.json'), 'utf8')

    const result = await w.cli(
      '--json',
      'restore',
      'content/home.json',
      'content/news.json',
      'content/draft.json',
    )
    expect(result.stderr).toBe('')
    expect(result.exitCode).toBe(0)
    expect(result.json.applied.map((i: { path: string; action: string }) => [i.path, i.action])).toEqual([
      ['content/draft.json', 'delete-local'],
      ['content/home.json', 'pull'],
      ['content/news.json', 'pull'],
    ])

    expect(await w.readJson('content/home.json')).toMatchObject({ properties: { title: 'home' } })
    expect(await w.exists('content/news.json')).toBe(true)
    expect(await w.exists('content/draft.json')).toBe(false)
    // Not named: untouched.
    expect(await w.readJson('content/shop.json')).toMatchObject({ properties: { title: 'Not restored' } })
    // The dropped edit and the dropped new file are kept.
    const kept = await trash(w)
    expect(kept['content/home.json']).toBe(edited)
    expect(kept['content/draft.json']).toContain('"draft"')
    // The server was not written to.
    expect(await w.serverState()).toEqual(serverBefore)
    const status = await w.cli('--json', 'status')
    expect(status.json.changes.map((c: { path: string }) => c.path)).toEqual(['content/shop.json'])
  })

  test('a folder restores every edit under it; a path with nothing to restore is said plainly', async () => {
    const w = await syncedWorld(dialect)
    world = w
    await w.editJson('content/home.json', { properties: { title: 'one' } })
    await w.editJson('content/news.json', { properties: { title: 'two' } })
    const result = await w.cli('restore', 'content')
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toContain('restore: applied 2')
    expect((await w.cli('--json', 'status')).json.clean).toBe(true)

    const nothing = await w.cli('restore', 'content/home.json')
    expect(nothing.stderr).toContain('nothing to restore in content/home.json: it has no local edit')
    expect(nothing.exitCode).toBe(0)
  })

  test('a conflict is settled for the server copy, and the local side goes to trash', async () => {
    const w = await syncedWorld(dialect)
    world = w
    await w.editJson('content/home.json', { properties: { title: 'Local' } })
    await w.setContent('home', { properties: { title: 'Remote' } })
    const result = await w.cli('restore', 'content/home.json')
    expect(result.exitCode).toBe(0)
    expect(await w.readJson('content/home.json')).toMatchObject({ properties: { title: 'Remote' } })
    expect(Object.values(await trash(w)).join('')).toContain('Local')
  })
})

test('restore --dry-run says what it would drop and changes nothing', async () => {
  const w = await syncedWorld('spec')
  world = w
  await writeFile(w.file('content/home.json'), '{"id": "home", "broken": ')
  const result = await w.cli('restore', '--dry-run', 'content/home.json')
  expect(result.exitCode).toBe(0)
  expect(result.stdout).toContain('restore (dry run): would apply 1')
  expect(await readFile(w.file('content/home.json'), 'utf8')).toBe('{"id": "home", "broken": ')
})
