// A listing that did not change costs one 304: every run keeps the listings of schemas and
// content in .cms-sync/listings/ with their ETag and asks with If-None-Match next time (issue 17
// step 3). What must hold: the answer is the same as a full read, a change on the server is
// seen, a damaged kept listing is never used, and connection settings (secrets) and forms
// (people's entries) are never kept on disk.

import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { contentFile } from '../helpers/fixtures.js'
import { copyState, putState } from '../helpers/state-files.js'
import { inheritingWorld, startWorld, syncedWorld, type World } from '../helpers/sync-world.js'

const LISTINGS = /^GET \/api\/demo\/live\/(schemas|content|media) (\d+)$/

describe.each(['spec', 'upstream'] as const)('kept listings (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  /** The status of each listing the command read, e.g. { content: 304, schemas: 304 }. */
  async function listingAnswers(w: World, ...args: string[]) {
    const start = w.proxy.answered.length
    const run = await w.cli(...args)
    const answers: Record<string, number> = {}
    for (const line of w.proxy.answered.slice(start)) {
      const m = LISTINGS.exec(line)
      if (m) answers[m[1]!] = Number(m[2])
    }
    return { run, answers }
  }

  /** Which kept listings carry a mark (the state they were found to match, remote-snapshot.ts). */
  async function marked(w: World): Promise<Record<string, boolean>> {
    const marks: Record<string, boolean> = {}
    for (const name of ['schemas', 'content']) {
      const head = JSON.parse(await readFile(w.file(`.cms-sync/listings/${name}.head.json`), 'utf8'))
      marks[name] = typeof head.clean === 'string'
    }
    return marks
  }

  /** What `status --json` says with no kept listing at all: every listing read and compared in full. */
  async function fullRead(w: World): Promise<unknown> {
    const kept = w.file('.cms-sync/listings')
    await rename(kept, `${kept}.aside`)
    try {
      return (await w.cli('--json', 'status')).json
    } finally {
      await rm(kept, { recursive: true, force: true })
      await rename(`${kept}.aside`, kept)
    }
  }

  /** A synced world whose kept listings are marked: the next status takes the state's side. */
  async function markedWorld(): Promise<World> {
    world = await syncedWorld(dialect)
    await world.cli('status')
    await world.cli('status')
    expect(await marked(world)).toEqual({ schemas: true, content: true })
    return world
  }

  test('a no-change status reads each listing as a 304, and says what a full read says', async () => {
    world = await syncedWorld(dialect)
    const w = world
    const first = await listingAnswers(w, '--json', 'status')
    const second = await listingAnswers(w, '--json', 'status')
    expect(second.answers).toEqual({ schemas: 304, content: 304 })
    expect(second.run.exitCode).toBe(0)
    expect(second.run.json).toEqual(first.run.json)
    expect(second.run.json.clean).toBe(true)
    // Kept: schemas and content; never connections (secrets) or forms (entries).
    expect((await readdir(w.file('.cms-sync/listings'))).sort()).toEqual([
      'content.head.json',
      'content.json',
      'schemas.head.json',
      'schemas.json',
    ])
  })

  test('an item changed on the server is seen: the listing is read in full again', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await w.cli('status')
    await w.setContent('home', { properties: { title: 'remote' } })
    const after = await listingAnswers(w, '--json', 'status')
    expect(after.answers.content).toBe(200)
    expect(after.run.json.changes).toContainEqual(
      expect.objectContaining({ path: 'content/home.json', action: 'pull' }),
    )
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(JSON.parse(await readFile(w.file('content/home.json'), 'utf8')).properties.title).toBe('remote')
    // The pull kept the new listing: the next status is a 304 again.
    expect((await listingAnswers(w, 'status')).answers).toEqual({ schemas: 304, content: 304 })
  })

  test('a damaged kept listing is not used: the listing is read in full', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await w.cli('status')
    const kept = w.file('.cms-sync/listings/content.json')
    const text = await readFile(kept, 'utf8')
    // The same ETag, a body cut short: its sha256 no longer matches.
    await writeFile(kept, text.slice(0, text.length - 40))
    const after = await listingAnswers(w, '--json', 'status')
    expect(after.answers.content).toBe(200)
    expect(after.run.exitCode).toBe(0)
    expect(after.run.json.clean).toBe(true)
  })

  test('a kept listing is never read or written through a symbolic link', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await w.cli('status')
    const outside = await mkdtemp(path.join(tmpdir(), 'cms-sync-outside-'))
    try {
      // A link in place of the kept file, to a file outside: not read, not written.
      const target = path.join(outside, 'shell-profile')
      await writeFile(target, 'export PATH=/usr/bin\n')
      await rm(w.file('.cms-sync/listings/content.json'))
      await symlink(target, w.file('.cms-sync/listings/content.json'))
      const after = await listingAnswers(w, '--json', 'status')
      expect(after.answers.content).toBe(200)
      expect(after.run.json.clean).toBe(true)
      expect(await readFile(target, 'utf8')).toBe('export PATH=/usr/bin\n')
      // A link in place of the folder: the command refuses to start (as for any link in .cms-sync/).
      await rm(w.file('.cms-sync/listings'), { recursive: true })
      await symlink(outside, w.file('.cms-sync/listings'))
      expect((await w.cli('status')).exitCode).toBe(2)
      expect(await readdir(outside)).toEqual(['shell-profile'])
    } finally {
      await rm(outside, { recursive: true, force: true })
    }
  })

  test('the media listing is kept too: a no-change status reads it as a 304', async () => {
    world = await startWorld(dialect, { resources: ['schemas', 'content', 'media'] })
    const w = world
    await mkdir(w.file('media/img'), { recursive: true })
    await writeFile(w.file('media/img/logo.txt'), 'v1')
    expect((await w.cli('sync')).exitCode).toBe(0)
    const first = await listingAnswers(w, '--json', 'status')
    const second = await listingAnswers(w, '--json', 'status')
    expect(second.answers).toEqual({ schemas: 304, content: 304, media: 304 })
    expect(second.run.json).toEqual(first.run.json)
    expect(second.run.json.clean).toBe(true)
    expect(await readdir(w.file('.cms-sync/listings'))).toContain('media.json')
  })

  test('a status that sees a server change marks nothing: the status after it sees the change again', async () => {
    const w = await markedWorld()
    await w.setContent('home', { properties: { title: 'remote' } })
    const first = await listingAnswers(w, '--json', 'status')
    expect(first.answers.content).toBe(200)
    expect(first.run.json.changes).toContainEqual(
      expect.objectContaining({ path: 'content/home.json', action: 'pull' }),
    )
    const second = await listingAnswers(w, '--json', 'status')
    expect(second.answers).toEqual({ schemas: 304, content: 304 })
    expect(second.run.json).toEqual(first.run.json)
    expect(await marked(w)).toEqual({ schemas: true, content: false })
    expect(second.run.json).toEqual(await fullRead(w))
  })

  test('a pull that took every change is clean; a server change after a marked 304 is seen', async () => {
    const w = await markedWorld()
    await w.setContent('home', { properties: { title: 'remote' } })
    expect((await w.cli('pull')).exitCode).toBe(0)
    const after = await listingAnswers(w, '--json', 'status')
    expect(after.answers).toEqual({ schemas: 304, content: 304 })
    expect(after.run.json.clean).toBe(true)
    // That status found the state matching the listing the pull kept: marked now.
    expect(await marked(w)).toEqual({ schemas: true, content: true })
    expect((await w.cli('--json', 'status')).json.clean).toBe(true)
    // A change and a deletion on the server after the marked runs: seen, as a full read sees them.
    await w.setContent('news', { properties: { title: 'changed after the mark' } })
    await w.server.remove('content', 'contact')
    const seen = await listingAnswers(w, '--json', 'status')
    expect(seen.answers.content).toBe(200)
    expect(seen.run.json.changes).toEqual([
      expect.objectContaining({ path: 'content/contact.json', action: 'delete-local' }),
      expect.objectContaining({ path: 'content/news.json', action: 'pull' }),
    ])
    expect(seen.run.json).toEqual(await fullRead(w))
  })

  test('a local edit over a marked listing is planned and pushed (the kept copy is read then)', async () => {
    const w = await markedWorld()
    await w.editJson('content/home.json', { properties: { title: 'local' } })
    const status = await listingAnswers(w, '--json', 'status')
    expect(status.answers).toEqual({ schemas: 304, content: 304 })
    expect(status.run.json.changes).toEqual([
      expect.objectContaining({ path: 'content/home.json', action: 'push' }),
    ])
    const push = await w.cli('push')
    expect(push.exitCode, push.stderr).toBe(0)
    expect((await w.server.get('content', 'home'))?.properties).toMatchObject({ title: 'local' })
    expect((await w.cli('--json', 'status')).json.clean).toBe(true)
  })

  test('a schedule on the server is reported by a status over a marked listing', async () => {
    world = await syncedWorld(dialect)
    const w = world
    const publishOn = '2031-01-01T00:00:00.000Z'
    await w.setContent('news', { publishOn })
    expect((await w.cli('pull')).exitCode).toBe(0)
    await w.cli('status')
    expect(await marked(w)).toEqual({ schemas: true, content: true })
    const status = await w.cli('--json', 'status')
    expect(status.json.scheduled).toEqual([
      { kind: 'content', id: 'news', path: 'content/news.json', type: 'publish', date: publishOn },
    ])
    expect(status.json).toEqual(await fullRead(w))
  })

  test('a run killed before it saved the state leaves no mark the next run trusts', async () => {
    const w = await markedWorld()
    const before = await copyState(w.root)
    await w.setContent('home', { properties: { title: 'remote' } })
    await w.setContent('news', { properties: { title: 'remote too' } })
    expect((await w.cli('pull')).exitCode).toBe(0)
    // As a kill after the files were written and the listing kept, before the state was saved.
    await putState(w.root, before)
    for (let i = 0; i < 2; i++) {
      const status = await listingAnswers(w, '--json', 'status')
      expect(status.answers).toEqual({ schemas: 304, content: 304 })
      expect(status.run.json).toEqual(await fullRead(w))
    }
    expect(await marked(w)).toEqual({ schemas: true, content: false })
    // The next pull settles it; the status after it marks the listing, the one after that trusts it.
    expect((await w.cli('pull')).exitCode).toBe(0)
    await w.cli('status')
    expect(await marked(w)).toEqual({ schemas: true, content: true })
    const status = await w.cli('--json', 'status')
    expect(status.json.clean).toBe(true)
    expect(status.json).toEqual(await fullRead(w))
    // A state put back from before the pull (a backup): the mark names another state, so the
    // server side is read from the kept copy, and the pulled files agree with it.
    await putState(w.root, before)
    const restored = await listingAnswers(w, '--json', 'status')
    expect(restored.answers).toEqual({ schemas: 304, content: 304 })
    expect(restored.run.json.clean).toBe(true)
    expect(restored.run.json).toEqual(await fullRead(w))
  })
})

describe.each(['spec', 'upstream'] as const)(
  'a marked listing on an inheriting server (%s dialect)',
  (dialect) => {
    let world: World | undefined
    afterEach(async () => world?.close())

    test('a new item is pushed, and the server keeps its link to the parent', async () => {
      const family = await inheritingWorld(dialect)
      const w = family.world
      world = w
      expect((await w.cli('sync')).exitCode).toBe(0)
      await w.cli('status')
      await w.cli('status')
      const head = JSON.parse(await readFile(w.file('.cms-sync/listings/content.head.json'), 'utf8'))
      expect(typeof head.clean).toBe('string')
      await w.writeJson(
        'content/brand-new.json',
        contentFile('brand-new', { properties: { title: 'New here' } }),
      )
      const push = await w.cli('push')
      expect(push.exitCode, push.stderr).toBe(0)
      expect((await w.server.request('GET', '/api/demo/settings/sync')).body).toMatchObject({ enabled: true })
      expect((await w.cli('status', '--json')).json).toMatchObject({
        clean: true,
        inherited: ['content/inherited-page.json'],
      })
    })
  },
)
