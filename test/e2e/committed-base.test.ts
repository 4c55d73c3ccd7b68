// cms-sync.lock, the committed base (design.md "Three-way state"): a git clone or a CI checkout,
// which has no .cms-sync/, syncs three-way exactly as the workspace that committed it; a lock
// line that is stale, merged from another branch or at odds with the local state gives a
// conflict at worst, never an overwrite. Real git, a real emulator, the real CLI.

import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { readMediaIndex } from '../../src/workspace/media-index.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
    cwd,
    stdio: 'pipe',
  }).toString()

const title = async (_w: World, dir: string, rel: string) =>
  (JSON.parse(await readFile(path.join(dir, rel), 'utf8')) as { properties: { title: string } }).properties
    .title
const serverTitle = async (w: World, id: string) =>
  ((await w.server.get('content', id))!.properties as { title: string }).title

async function editIn(dir: string, rel: string, newTitle: string): Promise<void> {
  const file = path.join(dir, rel)
  const value = JSON.parse(await readFile(file, 'utf8'))
  await writeFile(file, `${JSON.stringify({ ...value, properties: { title: newTitle } }, null, 2)}\n`)
}

/** The synced workspace committed to a git repository, and a clone of it (no .cms-sync/). */
async function committedAndCloned(w: World, name = 'clone'): Promise<string> {
  await writeFile(w.file('.gitignore'), '.cms-sync/\n')
  git(w.root, 'init', '-q', '-b', 'main')
  git(w.root, 'add', '.')
  git(w.root, 'commit', '-qm', 'site')
  return cloneOf(w, name)
}

function cloneOf(w: World, name: string): string {
  const clone = path.join(w.root, '..', name)
  git(path.dirname(clone), 'clone', '-q', w.root, clone)
  return clone
}

describe.each(['spec', 'upstream'] as const)('cms-sync.lock, the committed base (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  async function synced(): Promise<World> {
    world = await syncedWorld(dialect)
    return world
  }

  test('a sync writes the lock: sorted, one line per item, the hash of each file as written', async () => {
    const w = await synced()
    const lines = (await readFile(w.file('cms-sync.lock'), 'utf8')).trimEnd().split('\n')
    expect(lines[0]).toMatch(/^# cms-sync\.lock/)
    expect(JSON.parse(lines[1]!)).toEqual({
      lock: 1,
      server: w.proxy.url,
      project: 'demo',
      environment: 'live',
    })
    const items = lines.slice(2).map((line) => JSON.parse(line))
    expect(items.map((i) => i.path)).toEqual([
      'content/contact.json',
      'content/home.json',
      'content/news.json',
      'content/shop.json',
      'schemas/section.json',
    ])
    for (const item of items) {
      // What a merge tool checks: the committed file is the base when its sha256 is the line's hash.
      const bytes = await readFile(w.file(item.path))
      expect(item.hash).toBe(createHash('sha256').update(bytes).digest('hex'))
      expect(Object.keys(item)).toEqual(['path', 'kind', 'id', 'hash', 'rev'])
    }
    // A run that changes nothing leaves the file alone
    const before = await readFile(w.file('cms-sync.lock'), 'utf8')
    expect((await w.cli('sync')).exitCode).toBe(0)
    expect(await readFile(w.file('cms-sync.lock'), 'utf8')).toBe(before)
  })

  test('a fresh clone pushes an item edited in git and untouched on the server (issue 15)', async () => {
    const w = await synced()
    const clone = await committedAndCloned(w)
    await editIn(clone, 'content/contact.json', 'edited in git')
    const push = await w.cliIn(clone, '--json', 'push')
    expect(push.exitCode, push.stderr + push.stdout).toBe(0)
    expect(push.json.applied).toMatchObject([
      { path: 'content/contact.json', local: 'modified', action: 'push' },
    ])
    expect(await serverTitle(w, 'contact')).toBe('edited in git')
    // The lock moved with the push: the one file besides the edit to commit back
    const changed = git(clone, 'status', '--porcelain').split('\n').filter(Boolean)
    expect(changed.map((line) => line.trim()).sort()).toEqual(['M cms-sync.lock', 'M content/contact.json'])
    // A second checkout of that commit is clean
    git(clone, 'commit', '-qam', 'contact')
    const second = path.join(w.root, '..', 'second')
    git(path.dirname(second), 'clone', '-q', clone, second)
    expect((await w.cliIn(second, '--json', 'status')).json).toMatchObject({ clean: true, changes: [] })
  })

  test('a fresh clone pulls what editors changed, and an item edited on both sides is a conflict', async () => {
    const w = await synced()
    const clone = await committedAndCloned(w)
    await w.setContent('news', { properties: { title: 'editor' } })
    await w.setContent('home', { properties: { title: 'editor' } })
    await w.server.remove('content', 'shop')
    await editIn(clone, 'content/home.json', 'developer')
    const status = await w.cliIn(clone, '--json', 'status')
    expect(status.json.changes).toMatchObject([
      { path: 'content/home.json', local: 'modified', remote: 'modified', action: 'conflict' },
      { path: 'content/news.json', local: 'unchanged', remote: 'modified', action: 'pull' },
      { path: 'content/shop.json', local: 'unchanged', remote: 'deleted', action: 'delete-local' },
    ])
    const push = await w.cliIn(clone, '--json', 'push')
    expect(push.exitCode).toBe(3)
    expect(push.json.conflicts).toMatchObject([{ path: 'content/home.json' }])
    // The editor's change is still on the server
    expect(await serverTitle(w, 'home')).toBe('editor')
    const sync = await w.cliIn(clone, '--json', 'sync')
    expect(sync.exitCode).toBe(3)
    expect(await title(w, clone, 'content/news.json')).toBe('editor')
    expect(await title(w, clone, 'content/home.json')).toBe('developer')
    expect(await serverTitle(w, 'home')).toBe('editor')
  })

  test('a fresh clone merges an item edited on both sides field by field, its base read from git (issue 16)', async () => {
    const w = await synced()
    const clone = await committedAndCloned(w)
    // The clone has cms-sync.lock and the committed files, nothing else of ours
    await expect(readFile(path.join(clone, '.cms-sync', 'state.json'))).rejects.toThrow()
    // A developer edits the title in git; an editor sets the sort order in the server's UI
    const file = path.join(clone, 'content', 'home.json')
    const local = JSON.parse(await readFile(file, 'utf8'))
    local.properties.title = 'developer'
    await writeFile(file, `${JSON.stringify(local, null, 2)}\n`)
    await w.setContent('home', { sort: 7 })
    const status = await w.cliIn(clone, '--json', 'status')
    expect(status.exitCode, status.stderr).toBe(0)
    expect(status.json.changes).toMatchObject([
      { path: 'content/home.json', local: 'modified', remote: 'modified', action: 'merge' },
    ])
    const sync = await w.cliIn(clone, '--json', 'sync')
    expect(sync.exitCode, sync.stderr + sync.stdout).toBe(0)
    // Both edits landed on both sides
    expect(await w.server.get('content', 'home')).toMatchObject({
      sort: 7,
      properties: { title: 'developer' },
    })
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({
      sort: 7,
      properties: { title: 'developer' },
    })
    expect((await w.cliIn(clone, '--json', 'status')).json).toMatchObject({ clean: true, changes: [] })
  })

  test('a lock line whose hash is the committed file, while the server moved on, pulls or conflicts: never an overwrite', async () => {
    const w = await synced()
    const clone = await committedAndCloned(w)
    // The server moves on after the commit; the clone's file and lock line still agree
    await w.setContent('contact', { properties: { title: 'editor' } })
    expect((await w.cliIn(clone, '--json', 'push')).json).toEqual({ applied: [], conflicts: [], failed: [] })
    expect(await serverTitle(w, 'contact')).toBe('editor')
    // Edited in git too: a conflict, whatever the command
    await editIn(clone, 'content/contact.json', 'developer')
    for (const command of ['push', 'sync']) {
      const run = await w.cliIn(clone, '--json', command)
      expect(run.exitCode).toBe(3)
      expect(run.json.conflicts).toMatchObject([{ path: 'content/contact.json' }])
    }
    expect(await serverTitle(w, 'contact')).toBe('editor')
    expect(await title(w, clone, 'content/contact.json')).toBe('developer')
  })

  test('an older checkout with local state (lock and state disagree) is a conflict, not a revert', async () => {
    const w = await synced()
    await committedAndCloned(w)
    // Given an edit pushed and committed from the workspace that has local state
    await editIn(w.root, 'content/home.json', 'second')
    expect((await w.cli('push')).exitCode).toBe(0)
    git(w.root, 'commit', '-qam', 'second')
    // When the file and the lock of the commit before are checked out again
    git(w.root, 'checkout', 'HEAD~1', '--', 'content/home.json', 'cms-sync.lock')
    expect(await title(w, w.root, 'content/home.json')).toBe('home')
    // Then the state alone would push the old title back; with the lock it is a conflict
    const push = await w.cli('--json', 'push')
    expect(push.exitCode).toBe(3)
    expect(push.json.conflicts).toMatchObject([{ path: 'content/home.json' }])
    expect(await serverTitle(w, 'home')).toBe('second')
    // ... which stays a conflict on the next run (the lock keeps its line until it is settled)
    expect((await w.cli('--json', 'push')).exitCode).toBe(3)
    expect(await serverTitle(w, 'home')).toBe('second')
    // and resolve settles it as the user says
    expect((await w.cli('resolve', 'content/home.json', '--keep', 'remote')).exitCode).toBe(0)
    expect(await title(w, w.root, 'content/home.json')).toBe('second')
    expect((await w.cli('--json', 'status')).json.clean).toBe(true)
  })

  test('after a git pull of what CI pushed, a local edit with stale local state is pushed', async () => {
    const w = await synced()
    const ci = await committedAndCloned(w, 'ci')
    await editIn(ci, 'content/news.json', 'from ci')
    expect((await w.cliIn(ci, 'push')).exitCode).toBe(0)
    git(ci, 'commit', '-qam', 'ci push')
    // The developer's workspace (state from before CI's push) pulls the commit and edits again
    git(w.root, 'pull', '-q', ci, 'main')
    await editIn(w.root, 'content/news.json', 'developer')
    const push = await w.cli('--json', 'push')
    expect(push.exitCode, JSON.stringify(push.json)).toBe(0)
    expect(await serverTitle(w, 'news')).toBe('developer')
  })

  test('a lock merged from two branches (a git conflict in the lock) gives conflicts at worst', async () => {
    const w = await synced()
    const a = await committedAndCloned(w, 'a')
    const b = cloneOf(w, 'b')
    // Two branches push neighbouring items, so their lock lines conflict in git
    await editIn(a, 'content/home.json', 'from a')
    expect((await w.cliIn(a, 'push')).exitCode).toBe(0)
    git(a, 'commit', '-qam', 'a')
    await editIn(b, 'content/news.json', 'from b')
    expect((await w.cliIn(b, 'push')).exitCode).toBe(0)
    git(b, 'commit', '-qam', 'b')
    let merged = true
    try {
      git(b, 'pull', '-q', '--no-rebase', a, 'main')
    } catch {
      merged = false
    }
    expect(merged).toBe(false)
    expect(await readFile(path.join(b, 'cms-sync.lock'), 'utf8')).toContain('<<<<<<<')
    // An editor changes home after branch a pushed it, which the merged lock cannot know
    await w.setContent('home', { properties: { title: 'editor' } })
    await editIn(b, 'content/home.json', 'b edits the merged file')
    const sync = await w.cliIn(b, '--json', 'sync')
    expect(sync.exitCode).toBe(3)
    expect(sync.json.conflicts).toMatchObject([{ path: 'content/home.json' }])
    expect(await serverTitle(w, 'home')).toBe('editor')
    // The lock is whole again, with no markers, and the agreed items are bases again
    const lock = await readFile(path.join(b, 'cms-sync.lock'), 'utf8')
    expect(lock).not.toContain('<<<<<<<')
    expect(lock).toContain('"path":"content/news.json"')
  })

  test('the lock binds a fresh clone to its target: another environment is a safety stop', async () => {
    const w = await synced()
    const clone = await committedAndCloned(w)
    const config = path.join(clone, 'cms-sync.yaml')
    await writeFile(
      config,
      (await readFile(config, 'utf8')).replace('environment: live', 'environment: staging'),
    )
    w.proxy.seen.length = 0
    const run = await w.cliIn(clone, 'push')
    expect(run.exitCode).toBe(4)
    expect(run.stderr).toContain('bound to')
    expect(run.stderr).toContain('--rebind')
    expect(w.proxy.seen.filter((r) => !r.startsWith('GET'))).toEqual([])
  })

  test('a damaged lock is named with its line and changes nothing', async () => {
    const w = await synced()
    const clone = await committedAndCloned(w)
    const lockFile = path.join(clone, 'cms-sync.lock')
    await writeFile(lockFile, `${await readFile(lockFile, 'utf8')}{"path": "content/x.json"\n`)
    const run = await w.cliIn(clone, 'push')
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toMatch(/cms-sync\.lock, line 8: expected one JSON object per line/)
  })
})

describe('media in the lock', () => {
  let world: World
  afterEach(async () => world?.close())

  test('a fresh clone pushes media bytes edited in git, and the lock records the sha256 and id', async () => {
    const { startWorld } = await import('../helpers/sync-world.js')
    world = await startWorld('spec', { resources: ['schemas', 'content', 'media'], content: [] })
    const w = world
    await mkdir(w.file('media/img'), { recursive: true })
    await writeFile(w.file('media/img/logo.txt'), 'v1')
    expect((await w.cli('sync')).exitCode).toBe(0)
    const line = (await readFile(w.file('cms-sync.lock'), 'utf8'))
      .split('\n')
      .find((l) => l.includes('"kind":"media"'))!
    const id = (await readMediaIndex(w.root))!.get('img/logo.txt')!
    expect(JSON.parse(line)).toEqual({
      path: 'media/img/logo.txt',
      kind: 'media',
      id,
      hash: createHash('sha256').update('v1').digest('hex'),
      rev: expect.any(String),
      name: 'logo.txt',
      folder: 'img',
    })
    const clone = await committedAndCloned(w)
    await writeFile(path.join(clone, 'media/img/logo.txt'), 'v2')
    const push = await w.cliIn(clone, '--json', 'push')
    expect(push.exitCode, push.stderr).toBe(0)
    expect(push.json.applied).toMatchObject([{ path: 'media/img/logo.txt', action: 'push' }])
    expect(await (await fetch(`${w.emulator.url}/media/demo/live/${id}`)).text()).toBe('v2')
    await rm(path.join(clone, '.cms-sync'), { recursive: true })
    expect((await w.cliIn(clone, '--json', 'status')).json.clean).toBe(true)
  })

  test('upstream (no media dates): bytes edited in a fresh clone are checked against the server before a push', async () => {
    const { startWorld } = await import('../helpers/sync-world.js')
    const { createMediaApi } = await import('../../src/remote/media.js')
    world = await startWorld('upstream', { resources: ['schemas', 'content', 'media'], content: [] })
    const w = world
    await mkdir(w.file('media'), { recursive: true })
    await writeFile(w.file('media/note.txt'), 'v1')
    expect((await w.cli('sync')).exitCode).toBe(0)
    const id = (await readMediaIndex(w.root))!.get('note.txt')!
    const clone = await committedAndCloned(w)
    // Someone replaces the bytes on the server: upstream's listing cannot show it
    const upload = path.join(w.root, '..', 'editor-upload.txt')
    await writeFile(upload, 'editor')
    await createMediaApi(w.server).upload({ path: upload, size: 6, name: 'note.txt' }, id)
    const bytes = async () => (await fetch(`${w.emulator.url}/media/demo/live/${id}`)).text()
    expect(await bytes()).toBe('editor')
    // The clone's edit is a conflict, not an overwrite
    await writeFile(path.join(clone, 'media/note.txt'), 'developer')
    const push = await w.cliIn(clone, '--json', 'push')
    expect(push.exitCode, push.stderr).toBe(3)
    expect(push.json.conflicts).toMatchObject([{ path: 'media/note.txt' }])
    expect(await bytes()).toBe('editor')
    // With the server back at the lock's bytes, an edit is pushed as usual
    const third = cloneOf(w, 'third')
    await writeFile(path.join(third, 'media/note.txt'), 'v2')
    await writeFile(upload, 'v1')
    await createMediaApi(w.server).upload({ path: upload, size: 2, name: 'note.txt' }, id)
    const ok = await w.cliIn(third, '--json', 'push')
    expect(ok.exitCode, ok.stderr).toBe(0)
    expect(await bytes()).toBe('v2')
  })
})

describe.each(['spec', 'upstream'] as const)('a shallow clone (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test('a shallow clone that lacks the base says so by name, and merges once deepened', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await writeFile(w.file('.gitignore'), '.cms-sync/\n')
    git(w.root, 'init', '-q', '-b', 'main')
    git(w.root, 'add', '.')
    git(w.root, 'commit', '-qm', 'site')
    // A developer's edit committed on top: the lock's base for contact is the commit before
    await editIn(w.root, 'content/contact.json', 'developer')
    git(w.root, 'commit', '-qam', 'contact')
    const shallow = path.join(w.root, '..', 'shallow')
    git(path.dirname(shallow), 'clone', '-q', '--depth', '1', `file://${w.root}`, shallow)
    // An editor changes another field of the same item
    const current = (await w.server.get('content', 'contact'))!
    await w.server.put('content', 'contact', { ...current, sort: 9 })
    const status = await w.cliIn(shallow, '--json', 'status')
    expect(status.exitCode).toBe(3)
    expect(status.json.changes).toEqual([
      expect.objectContaining({
        path: 'content/contact.json',
        action: 'conflict',
        reason: expect.stringMatching(/shallow clone.*git fetch --unshallow.*fetch-depth: 0/),
      }),
    ])
    git(shallow, 'fetch', '-q', '--unshallow')
    const deepened = await w.cliIn(shallow, '--json', 'status')
    expect(deepened.exitCode, deepened.stderr).toBe(0)
    expect(deepened.json.changes).toEqual([
      expect.objectContaining({ path: 'content/contact.json', action: 'merge' }),
    ])
  })
})
