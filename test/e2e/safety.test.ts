// The guards and the promises around them (design.md "Safety guards"): a stop changes nothing
// and exits 4; --dry-run changes nothing; an unchanged workspace costs only the listings; a
// second process is refused with exit 5.

import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { acquireLock } from '../../src/state/lock.js'
import { editKeepingStat } from '../helpers/same-stat.js'
import { copyState } from '../helpers/state-files.js'
import { syncedWorld, type World, writeConfig } from '../helpers/sync-world.js'

describe.each(['spec', 'upstream'] as const)('safety (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  async function synced(): Promise<World> {
    world = await syncedWorld(dialect)
    return world
  }

  async function snapshot(w: World) {
    return {
      tree: await w.tree(),
      server: await w.serverState(),
      state: await copyState(w.root),
    }
  }

  test('deleting more than half of a kind stops with exit 4 and changes nothing, until --allow-deletes', async () => {
    const w = await synced()
    // When three of four content items vanish from the server
    for (const id of ['news', 'contact', 'shop']) await w.server.remove('content', id)
    const before = await snapshot(w)
    const stopped = await w.cli('sync')
    // Then the run stops, naming the numbers, and nothing moved
    expect(stopped.exitCode).toBe(4)
    expect(stopped.stderr).toMatch(/delete 3 of 4 content items/)
    expect(await snapshot(w)).toEqual(before)
    // And --allow-deletes lets it through
    expect((await w.cli('sync', '--allow-deletes')).exitCode).toBe(0)
    expect(await w.exists('content/news.json')).toBe(false)
  })

  test('a listing that comes back empty never deletes local files', async () => {
    const w = await synced()
    w.proxy.override = (method, route) =>
      method === 'GET' && route.endsWith('/content') ? { status: 200, body: '[]' } : undefined
    const before = await snapshot(w)
    const run = await w.cli('pull', '--json')
    expect(run.exitCode).toBe(4)
    expect(run.stderr).toMatch(/listed no content items/)
    expect(await snapshot(w)).toEqual(before)
  })

  test('a failed or malformed listing stops with exit 4 and changes nothing', async () => {
    const w = await synced()
    await w.editJson('content/home.json', { properties: { title: 'local' } })
    w.proxy.override = (method, route) =>
      method === 'GET' && route.endsWith('/content') ? { status: 200, body: '[{"id": "ho' } : undefined
    const before = await snapshot(w)
    const run = await w.cli('sync')
    expect(run.exitCode).toBe(4)
    expect(run.stderr).toMatch(/content listing failed/)
    // Said once: the client's listing error says it already, the stop adds no second one.
    expect(run.stderr.match(/nothing was changed/g)).toHaveLength(1)
    expect(await snapshot(w)).toEqual(before)
  })

  test('a workspace bound to another server refuses to sync until --rebind, then re-creates nothing', async () => {
    const w = await synced()
    await writeConfig(w.root, w.emulator.url, dialect)
    const before = await snapshot(w)
    const refused = await w.cli('sync')
    expect(refused.exitCode).toBe(4)
    expect(refused.stderr).toMatch(/bound to .* --rebind/)
    expect(await snapshot(w)).toEqual(before)
    const rebound = await w.cli('--json', 'sync', '--rebind')
    expect(rebound.exitCode).toBe(0)
    expect(rebound.json).toEqual({ applied: [], conflicts: [], failed: [] })
    expect((await w.cli('--json', 'status')).json.server).toBe(w.emulator.url)
  })

  test('--dry-run prints the plan and changes nothing on either side', async () => {
    const w = await synced()
    await w.editJson('content/home.json', { properties: { title: 'local' } })
    await w.remove('content/contact.json')
    await w.setContent('news', { properties: { title: 'remote' } })
    const before = await snapshot(w)
    const run = await w.cli('--json', 'sync', '--dry-run')
    expect(run.exitCode).toBe(0)
    expect(run.json.dryRun).toBe(true)
    expect(run.json.applied.map((i: { path: string; action: string }) => [i.path, i.action]).sort()).toEqual([
      ['content/contact.json', 'delete-remote'],
      ['content/home.json', 'push'],
      ['content/news.json', 'pull'],
    ])
    expect(await snapshot(w)).toEqual(before)
  })

  test('pulling an unchanged remote rewrites nothing', async () => {
    const w = await synced()
    const before = await w.mtimes()
    const run = await w.cli('--json', 'pull')
    expect(run.json).toEqual({ applied: [], conflicts: [], failed: [] })
    expect(await w.mtimes()).toEqual(before)
  })

  test('status on an unchanged workspace reads no file content and makes only the listing requests and the token check', async () => {
    const w = await synced()
    // Every synced file edited so that its stat stays the same: a status that read any of them
    // would show its edit.
    const files = (await readdir(w.root, { recursive: true })).filter((f) =>
      /^(content|schemas)\/.*\.json$/.test(f),
    )
    expect(files.length).toBeGreaterThan(1)
    for (const file of files) {
      const text = await readFile(w.file(file), 'utf8')
      const id = /"id": "([^"]+)"/.exec(text)![1]!
      await editKeepingStat(
        w.file(file),
        `"id": "${id}"`,
        `"id": "${id.replace(/^./, (c) => (c === 'x' ? 'y' : 'x'))}"`,
      )
    }
    w.proxy.seen.length = 0
    const status = await w.cli('--json', 'status')
    expect(status.json.clean).toBe(true)
    // The token check: upstream answers listings without a token, so they cannot vouch for it.
    expect([...w.proxy.seen].sort()).toEqual([
      'GET /api/demo/live/content',
      'GET /api/demo/live/schemas',
      'GET /api/user',
    ])
  })

  test('a second cms-sync on the same workspace is refused with exit 5', async () => {
    const w = await synced()
    const release = await acquireLock(w.root)
    try {
      const run = await w.cli('sync')
      expect(run.exitCode).toBe(5)
      expect(run.stderr).toContain(`locked by cms-sync (pid ${process.pid}, since`)
    } finally {
      await release()
    }
  })

  test('files cms-sync overwrites or deletes are kept in .cms-sync/trash/', async () => {
    const w = await synced()
    const old = await readFile(w.file('content/news.json'), 'utf8')
    await w.setContent('news', { properties: { title: 'remote' } })
    await w.server.remove('content', 'shop')
    expect((await w.cli('sync')).exitCode).toBe(0)
    const runs = await readdir(w.file('.cms-sync/trash'))
    const kept = path.join(w.root, '.cms-sync/trash', runs[0]!, 'content')
    expect(await readFile(path.join(kept, 'news.json'), 'utf8')).toBe(old)
    expect(await readdir(kept)).toContain('shop.json')
  })
  test('an explicit push lifts a paused watcher; a dry run does not', async () => {
    const w = await synced()
    const { readPause, setPause } = await import('../../src/watch/mass-change.js')
    await setPause(w.root, {
      since: new Date().toISOString(),
      reason: 'mass-change',
      count: 60,
      samplePaths: [],
    })
    await w.cli('push', '--dry-run')
    expect(await readPause(w.root)).toBeDefined()
    expect((await w.cli('push')).exitCode).toBe(0)
    expect(await readPause(w.root)).toBeUndefined()
  })
})
