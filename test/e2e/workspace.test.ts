// Files and the server together: bad local files fail alone, a committed workspace cloned with
// git adopts what is equal, writes go parents first, the server's own fields survive a push,
// and conflicts are settled with --prefer or resolve without losing the other side.

import { execFileSync } from 'node:child_process'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { contentFile } from '../helpers/fixtures.js'
import { startWorld, syncedWorld, type World } from '../helpers/sync-world.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe' }).toString()
const newContent = contentFile
const EXAMPLE = path.join(import.meta.dirname, '..', '..', 'example-workspace')

describe.each(['spec', 'upstream'] as const)('workspace and server (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  async function synced(): Promise<World> {
    world = await syncedWorld(dialect)
    return world
  }

  test('bad local files are named with their problem, pushed nowhere, and the rest still goes (exit 1)', async () => {
    const w = await synced()
    // Given four broken files and one good one
    await writeFile(w.file('content/broken.json'), '{ "id": "broken", ')
    await w.writeJson('content/typed.json', newContent('typed', { sort: 'first' }))
    await w.writeJson('content/mismatch.json', newContent('other-id'))
    await w.writeJson('content/orphan.json', newContent('orphan', { schemaId: 'no-such-schema' }))
    await w.writeJson('content/good.json', newContent('good'))
    // When we push
    const run = await w.cli('--json', 'push')
    // Then each bad file fails with its problem and the good one is on the server
    expect(run.exitCode).toBe(1)
    const failed = Object.fromEntries(
      run.json.failed.map((f: { path: string; error: string }) => [f.path, f.error]),
    )
    expect(failed).toEqual({
      'content/broken.json': expect.stringMatching(/invalid JSON/),
      'content/typed.json': expect.stringMatching(/sort: expected a number, got "first"/),
      'content/mismatch.json': expect.stringMatching(/"other-id" does not match the file name/),
      'content/orphan.json': expect.stringMatching(/unknown schema "no-such-schema"/),
    })
    expect(run.json.applied.map((i: { path: string }) => i.path)).toEqual(['content/good.json'])
    for (const id of ['broken', 'typed', 'mismatch', 'orphan', 'other-id'])
      expect(await w.server.get('content', id)).toBeUndefined()
    expect(await w.server.get('content', 'good')).toBeDefined()
  })

  test('a committed workspace cloned with git syncs without re-creating anything', async () => {
    const w = await synced()
    // Given the workspace committed to git (with .cms-sync/ ignored) and cloned elsewhere
    await writeFile(w.file('.gitignore'), '.cms-sync/\n')
    git(w.root, 'init', '-q')
    git(w.root, 'add', '.')
    git(w.root, '-c', 'user.email=t@example.invalid', '-c', 'user.name=t', 'commit', '-qm', 'site')
    const clone = path.join(w.root, '..', 'clone')
    git(path.dirname(clone), 'clone', '-q', w.root, clone)
    expect(await readdir(clone)).not.toContain('.cms-sync')
    // When the clone syncs
    w.proxy.seen.length = 0
    const run = await w.cliIn(clone, '--json', 'sync')
    // Then every item is adopted as the base, nothing is written anywhere
    expect(run.exitCode).toBe(0)
    expect(run.json).toEqual({ applied: [], conflicts: [], failed: [] })
    expect(w.proxy.seen.filter((r) => !r.startsWith('GET'))).toEqual([])
    expect(git(clone, 'status', '--porcelain')).toBe('')
    expect((await w.cliIn(clone, '--json', 'status')).json.clean).toBe(true)
  })

  test('a copy with no base at all (no .cms-sync/, no cms-sync.lock) reports conflicts, deletes nothing, and --prefer settles them', async () => {
    const w = await synced()
    await w.setContent('home', { properties: { title: 'remote' } })
    await w.server.remove('content', 'shop')
    const { rm } = await import('node:fs/promises')
    await rm(w.file('.cms-sync'), { recursive: true })
    await rm(w.file('cms-sync.lock'))
    await w.editJson('content/home.json', { properties: { title: 'local' } })
    const run = await w.cli('--json', 'sync')
    expect(run.exitCode, run.stdout + run.stderr).toBe(3)
    expect(run.json.conflicts).toMatchObject([{ path: 'content/home.json', local: 'added', remote: 'added' }])
    // One-sided items are created on the other side, never deleted without a base
    expect(run.json.applied).toMatchObject([{ path: 'content/shop.json', action: 'push' }])
    expect(await w.server.get('content', 'shop')).toBeDefined()
    const settled = await w.cli('--json', 'sync', '--prefer', 'remote')
    expect(settled.exitCode).toBe(0)
    expect(((await w.readJson('content/home.json')).properties as { title: string }).title).toBe('remote')
  })

  test('new parents are written before their children, and deleted after them', async () => {
    const w = await synced()
    // Given a new parent and child (the server checks the parent on every content write)
    await w.writeJson('content/a-child.json', newContent('a-child', { parentId: 'z-parent' }))
    await w.writeJson('content/z-parent.json', newContent('z-parent'))
    await w.writeJson('schemas/b-sub.json', {
      id: 'b-sub',
      name: 'Sub',
      type: 'content',
      parentSchemaId: 'z-base',
      allowedChildSchemas: [],
    })
    await w.writeJson('schemas/z-base.json', {
      id: 'z-base',
      name: 'Base',
      type: 'content',
      parentSchemaId: 'section',
      allowedChildSchemas: [],
    })
    w.proxy.seen.length = 0
    const push = await w.cli('--json', 'push')
    expect(push.exitCode).toBe(0)
    const writes = w.proxy.seen.filter((r) => r.startsWith('POST'))
    expect(writes).toEqual([
      'POST /api/demo/live/schemas/z-base',
      'POST /api/demo/live/schemas/b-sub',
      'POST /api/demo/live/content/z-parent',
      'POST /api/demo/live/content/a-child',
    ])
    expect((await w.server.get('content', 'a-child'))?.parentId).toBe('z-parent')
    // When all of them are deleted locally
    for (const rel of [
      'content/a-child.json',
      'content/z-parent.json',
      'schemas/b-sub.json',
      'schemas/z-base.json',
    ]) {
      await w.remove(rel)
    }
    w.proxy.seen.length = 0
    expect((await w.cli('push', '--allow-deletes')).exitCode).toBe(0)
    // Then content goes before the schemas it uses, and children before their parents
    expect(w.proxy.seen.filter((r) => r.startsWith('DELETE'))).toEqual([
      'DELETE /api/demo/live/content/a-child',
      'DELETE /api/demo/live/content/z-parent',
      'DELETE /api/demo/live/schemas/b-sub',
      'DELETE /api/demo/live/schemas/z-base',
    ])
    expect((await w.cli('--json', 'status')).json.clean).toBe(true)
  })

  test('a push keeps the server createDate and the publishing schedule', async () => {
    const w = await synced()
    // Given an item scheduled on the server
    const publishOn = '2031-01-01T00:00:00.000Z'
    await w.setContent('news', { publishOn })
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect((await w.readJson('content/news.json')).publishOn).toBe(publishOn)
    // When it is edited locally and pushed
    await w.editJson('content/news.json', { properties: { title: 'edited' } })
    expect((await w.cli('push')).exitCode).toBe(0)
    // Then the schedule and the creation date are what they were
    const stored = await w.server.get('content', 'news')
    expect(stored).toMatchObject({
      publishOn,
      createDate: '2024-05-01T10:00:00.000Z',
      properties: { title: 'edited' },
    })
    expect((await w.cli('--json', 'status')).json.clean).toBe(true)
  })

  test("the server's normalisation comes back to the file without an echo", async () => {
    const w = await synced()
    // sort 0 asks the server to pick a place (upstream §7.1)
    await w.writeJson('content/placed.json', newContent('placed', { sort: 0 }))
    expect((await w.cli('push')).exitCode).toBe(0)
    const sort = (await w.readJson('content/placed.json')).sort
    expect(sort).toBe((await w.server.get('content', 'placed'))?.sort)
    expect(sort).toBeGreaterThan(0)
    expect((await w.cli('--json', 'status')).json.clean).toBe(true)
  })

  test('schemas are pulled and pushed like content', async () => {
    const w = await synced()
    const schema = await w.readJson('schemas/section.json')
    expect(schema).not.toHaveProperty('isLocked')
    await w.editJson('schemas/section.json', { name: 'Renamed' })
    expect((await w.cli('push')).exitCode).toBe(0)
    expect((await w.server.get('schema', 'section'))?.name).toBe('Renamed')
  })

  test('resolve --keep local pushes the local side and keeps the server copy in trash; diff shows both', async () => {
    const w = await synced()
    await w.editJson('content/home.json', { properties: { title: 'local' } })
    await w.setContent('home', { properties: { title: 'remote' } })
    const diff = await w.cli('diff', 'content/home.json')
    expect(diff.stdout).toContain('--- remote/content/home.json')
    expect(diff.stdout).toMatch(/^- {4}"title": "remote"$/m)
    expect(diff.stdout).toMatch(/^\+ {4}"title": "local"$/m)
    expect((await w.cli('sync')).exitCode).toBe(3)
    const resolve = await w.cli('--json', 'resolve', 'content/home.json', '--keep', 'local')
    expect(resolve.exitCode).toBe(0)
    expect(resolve.json.applied).toMatchObject([{ path: 'content/home.json', action: 'push' }])
    expect(await w.server.get('content', 'home')).toMatchObject({ properties: { title: 'local' } })
    const runs = await readdir(w.file('.cms-sync/trash'))
    const losers = await Promise.all(
      runs.map((r) =>
        readFile(w.file(`.cms-sync/trash/${r}/content/home.json.remote`), 'utf8').catch(() => ''),
      ),
    )
    expect(losers.join('')).toContain('"remote"')
    expect((await w.cli('--json', 'status')).json.clean).toBe(true)
  })

  test('path arguments limit a run to those files', async () => {
    const w = await synced()
    await w.editJson('content/home.json', { properties: { title: 'one' } })
    await w.editJson('content/news.json', { properties: { title: 'two' } })
    const run = await w.cli('--json', 'push', 'content/home.json')
    expect(run.json.applied.map((i: { path: string }) => i.path)).toEqual(['content/home.json'])
    expect((await w.cli('--json', 'status')).json.changes).toMatchObject([
      { path: 'content/news.json', action: 'push' },
    ])
  })
  test('paths in .cmsyncignore are never synced either way', async () => {
    const w = await synced()
    await writeFile(w.file('.cmsyncignore'), 'content/news.json\ncontent/drafts-*.json\n')
    await w.editJson('content/news.json', { properties: { title: 'local only' } })
    await w.writeJson('content/drafts-1.json', newContent('drafts-1'))
    await w.setContent('news', { properties: { title: 'remote only' } })
    const run = await w.cli('--json', 'sync')
    expect(run.json).toEqual({ applied: [], conflicts: [], failed: [] })
    expect(await w.server.get('content', 'drafts-1')).toBeUndefined()
    expect(await w.readJson('content/news.json')).toMatchObject({ properties: { title: 'local only' } })
  })

  test('the same server state always gives the same bytes: a pull of the seeded example equals its files', async () => {
    // Given the emulator seeded from the example workspace (which holds canonical files)
    world = await startWorld(dialect, { seedDir: EXAMPLE })
    // When an empty workspace syncs
    expect((await world.cli('sync')).exitCode).toBe(0)
    // Then every schema and content file is byte-identical to the example's
    const tree = await world.tree()
    for (const folder of ['schemas', 'content']) {
      for (const name of await readdir(path.join(EXAMPLE, folder))) {
        expect(tree[`${folder}/${name}`], `${folder}/${name}`).toBe(
          await readFile(path.join(EXAMPLE, folder, name), 'utf8'),
        )
      }
    }
  })
})
