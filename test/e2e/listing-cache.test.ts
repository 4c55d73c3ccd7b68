// One way to know a listing did not change (design.md "Listings are read conditionally"): the
// state records, per kind, the validator (ETag with its URL) of the listing its bases equal item
// for item, and asks with If-None-Match of it. A 304 means the server side is the bases: nothing
// downloaded, parsed or hashed, and no listing body kept anywhere. What must hold: the answer is
// what a full read says, a server change is seen, the tool's own write drops the kind's
// validator, and a local edit over a 304 is planned on the true listing.

import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { createMediaApi } from '../../src/remote/media.js'
import { contentFile } from '../helpers/fixtures.js'
import { inheritingWorld, startWorld, syncedWorld, type World } from '../helpers/sync-world.js'

const LISTINGS = /^GET \/api\/demo\/live\/(schemas|content|media) (\d+)$/

describe.each(['spec', 'upstream'] as const)('conditional listings (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  /** The statuses of each listing the command read, in order, e.g. { content: [304], schemas: [304] }. */
  async function listingAnswers(w: World, ...args: string[]) {
    const start = w.proxy.answered.length
    const built = w.emulator.stats.listingsBuilt
    const run = await w.cli(...args)
    const answers: Record<string, number[]> = {}
    for (const line of w.proxy.answered.slice(start)) {
      const m = LISTINGS.exec(line)
      if (m) answers[m[1]!] = [...(answers[m[1]!] ?? []), Number(m[2])]
    }
    return { run, answers, built: w.emulator.stats.listingsBuilt - built }
  }

  /** The validators the state records, by listing name. */
  async function validators(w: World): Promise<Record<string, { url: string; etag: string }>> {
    return JSON.parse(await readFile(w.file('.cms-sync/state/index.json'), 'utf8')).validators ?? {}
  }

  /** What `status --json` says with no validator recorded: every listing read and compared in full. */
  async function fullRead(w: World): Promise<unknown> {
    const file = w.file('.cms-sync/state/index.json')
    const text = await readFile(file, 'utf8')
    const { validators: _dropped, ...rest } = JSON.parse(text)
    await writeFile(file, JSON.stringify(rest))
    try {
      const start = w.proxy.answered.length
      const json = (await w.cli('--json', 'status')).json
      expect(
        w.proxy.answered.slice(start).filter((line) => LISTINGS.test(line) && line.endsWith(' 304')),
      ).toEqual([])
      return json
    } finally {
      await writeFile(file, text)
    }
  }

  test('after a sync, a no-change status makes one conditional request per kind, each a 304, and reads no body', async () => {
    world = await syncedWorld(dialect)
    const w = world
    expect((await w.cli('sync')).exitCode).toBe(0)
    expect(Object.keys(await validators(w)).sort()).toEqual(['content', 'schemas'])
    const status = await listingAnswers(w, '--json', 'status')
    expect(status.answers).toEqual({ schemas: [304], content: [304] })
    // Spec answers a matching conditional listing before it builds the body; upstream hashes it.
    if (dialect === 'spec') expect(status.built).toBe(0)
    expect(status.run.exitCode).toBe(0)
    expect(status.run.json.clean).toBe(true)
    expect(status.run.json).toEqual(await fullRead(w))
    // No listing body kept anywhere.
    await expect(stat(w.file('.cms-sync/listings'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  test('a server change after the validator was recorded is seen, and the pull that takes it records the new one', async () => {
    world = await syncedWorld(dialect)
    const w = world
    expect((await w.cli('sync')).exitCode).toBe(0)
    const before = await validators(w)
    await w.setContent('home', { properties: { title: 'remote' } })
    await w.server.remove('content', 'contact')
    const seen = await listingAnswers(w, '--json', 'status')
    // The content listing changed: the run has something to do, so the 304 of schemas (which
    // carries no server object) is read again in full before the plan.
    expect(seen.answers).toEqual({ schemas: [304, 200], content: [200] })
    expect(seen.run.json.changes).toEqual([
      expect.objectContaining({ path: 'content/contact.json', action: 'delete-local' }),
      expect.objectContaining({ path: 'content/home.json', action: 'pull' }),
    ])
    expect(seen.run.json).toEqual(await fullRead(w))
    // A status saves nothing: the state still names the old listing.
    expect(await validators(w)).toEqual(before)
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(JSON.parse(await readFile(w.file('content/home.json'), 'utf8')).properties.title).toBe('remote')
    expect((await validators(w)).content?.etag).not.toBe(before.content?.etag)
    const after = await listingAnswers(w, '--json', 'status')
    expect(after.answers).toEqual({ schemas: [304], content: [304] })
    expect(after.run.json.clean).toBe(true)
  })

  test("the tool's own push drops the kind's validator: the next status reads the true listing", async () => {
    world = await syncedWorld(dialect)
    const w = world
    expect((await w.cli('sync')).exitCode).toBe(0)
    await w.editJson('content/home.json', { properties: { title: 'local' } })
    const planned = await listingAnswers(w, '--json', 'status')
    // A local change: the 304 stands for nothing the plan can act on, so content is read in full.
    expect(planned.answers).toEqual({ schemas: [304, 200], content: [304, 200] })
    expect(planned.run.json.changes).toEqual([
      expect.objectContaining({ path: 'content/home.json', action: 'push' }),
    ])
    const push = await w.cli('push')
    expect(push.exitCode, push.stderr).toBe(0)
    expect(Object.keys(await validators(w))).not.toContain('content')
    expect((await w.server.get('content', 'home'))?.properties).toMatchObject({ title: 'local' })
    // No validator for content now: read in full, and found to be the bases (schemas: a 304).
    const next = await listingAnswers(w, '--json', 'status')
    expect(next.answers).toEqual({ schemas: [304], content: [200] })
    expect(next.run.json.clean).toBe(true)
  })

  test('a schedule on the server is reported by a status over a 304', async () => {
    world = await syncedWorld(dialect)
    const w = world
    const publishOn = '2031-01-01T00:00:00.000Z'
    await w.setContent('news', { publishOn })
    expect((await w.cli('pull')).exitCode).toBe(0)
    const status = await listingAnswers(w, '--json', 'status')
    // Upstream lists content without its dates, so the schedule reads the item by id; a project
    // whose recorded listing shared nothing with a parent is not listed again first (items.ts).
    expect(status.answers).toEqual({ schemas: [304], content: [304] })
    expect(status.run.json.scheduled).toEqual([
      { kind: 'content', id: 'news', path: 'content/news.json', type: 'publish', date: publishOn },
    ])
    expect(status.run.json).toEqual(await fullRead(w))
  })

  test('media too: a no-change status is a 304, a file added on the server is seen, our own upload drops it', async () => {
    world = await startWorld(dialect, { content: ['home'], resources: ['schemas', 'content', 'media'] })
    const w = world
    await mkdir(w.file('media/img'), { recursive: true })
    await writeFile(w.file('media/img/one.png'), 'one')
    expect((await w.cli('sync')).exitCode).toBe(0)
    // The upload dropped the media validator; the sync after it records the listing it finds.
    expect((await w.cli('sync')).exitCode).toBe(0)
    expect(Object.keys(await validators(w))).toContain('media')
    const quiet = await listingAnswers(w, '--json', 'status')
    expect(quiet.answers.media).toEqual([304])
    expect(quiet.run.json.clean).toBe(true)
    expect(quiet.run.json).toEqual(await fullRead(w))
    const api = createMediaApi(w.server)
    const other = path.join(w.root, '..', 'two.png')
    await writeFile(other, 'two')
    await api.upload({ path: other, size: 3, name: 'two.png', sha256: '' })
    const seen = await listingAnswers(w, '--json', 'status')
    expect(seen.answers.media).toEqual([200])
    expect(seen.run.json.changes).toContainEqual(expect.objectContaining({ action: 'pull' }))
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(await w.exists('media/two.png')).toBe(true)
    // Media are recorded by a run whose plan saw no server change of them: the pull above saw
    // one, the one after it records the listing it finds.
    expect((await listingAnswers(w, 'status')).answers.media).toEqual([200])
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect((await listingAnswers(w, 'status')).answers.media).toEqual([304])
    await writeFile(w.file('media/img/three.png'), 'three')
    expect((await w.cli('push')).exitCode).toBe(0)
    expect(Object.keys(await validators(w))).not.toContain('media')
    const after = await listingAnswers(w, '--json', 'status')
    expect(after.answers.media).toEqual([200])
    expect(after.run.json.clean).toBe(true)
  })

  test('an old .cms-sync/listings/ folder is ignored', async () => {
    world = await syncedWorld(dialect)
    const w = world
    const sync = await w.cli('sync')
    expect(sync.exitCode, sync.stderr).toBe(0)
    await mkdir(w.file('.cms-sync/listings'), { recursive: true })
    await writeFile(w.file('.cms-sync/listings/content.json'), '[]')
    await writeFile(
      w.file('.cms-sync/listings/content.head.json'),
      JSON.stringify({ url: 'x', etag: 'W/"0"', sha256: 'x', clean: 'x' }),
    )
    const status = await listingAnswers(w, '--json', 'status')
    expect(status.run.json.clean).toBe(true)
    expect(status.run.json).toEqual(await fullRead(w))
    await rm(w.file('.cms-sync/listings'), { recursive: true })
  })
})

describe.each(['spec', 'upstream'] as const)(
  'conditional listings on an inheriting server (%s dialect)',
  (dialect) => {
    let world: World | undefined
    afterEach(async () => world?.close())

    test('a new item is pushed over a 304, and the server keeps its link to the parent', async () => {
      const family = await inheritingWorld(dialect)
      const w = family.world
      world = w
      expect((await w.cli('sync')).exitCode).toBe(0)
      expect((await w.cli('sync')).exitCode).toBe(0)
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
