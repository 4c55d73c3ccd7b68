// The watcher's batches run edit-only (src/engine/plan-edits.ts): only the dirty paths are
// planned, each item read by id, never a listing. What a user checks: an edit costs one read
// and one write; both sides changed is a conflict; deletes keep their guards, and a file renamed
// by hand never deletes its item, even when the file claiming the id is not in the batch; a new
// file is created; an inherited item gets its own copy first; media still sync (by a full
// plan); the remote poll still finds server edits, and a quiet one stops after the listings.

import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { createMediaApi } from '../../src/remote/media.js'
import { contentFile } from '../helpers/fixtures.js'
import { type Dialect, inheritingWorld, startWorld, syncedWorld, type World } from '../helpers/sync-world.js'
import { serverTitle, watchReconciled } from '../helpers/watch.js'
import { waitFor } from '../watch/helpers.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** The world watched (a remote poll every hour: none in the way, unless asked), start-up reconcile done. */
const watched = (w: World, pollSeconds = 3600) => watchReconciled(w, cleanups, pollSeconds)

async function world(dialect: Dialect): Promise<World> {
  const w = await syncedWorld(dialect)
  cleanups.push(() => w.close())
  return w
}

/** The requests the daemon made from now on (through the counting proxy). */
function requestsFrom(w: World) {
  const start = w.proxy.seen.length
  return () => w.proxy.seen.slice(start)
}

/**
 * An editor's save: the new text written beside the workspace and renamed over the file, so the
 * watcher sees one edit. Written in place, a truncate and a write a loaded machine delivers apart
 * are two batches, each read by id: two edits, which is not what these tests count.
 */
async function saveAsEditor(w: World, rel: string, change: Record<string, unknown>): Promise<void> {
  const next = `${w.root}.save-${process.pid}.json`
  await writeFile(next, `${JSON.stringify({ ...(await w.readJson(rel)), ...change }, null, 2)}\n`)
  await rename(next, w.file(rel))
}

const isListing = (request: string) => /^GET \/api\/demo\/live\/(content|schemas)$/.test(request)

describe.each(['spec', 'upstream'] as const)('watch edit-only runs (%s dialect)', (dialect) => {
  test('an edit is pushed with one read of the item and one write, no listing', async () => {
    const w = await world(dialect)
    const d = await watched(w)
    const requests = requestsFrom(w)
    await saveAsEditor(w, 'content/home.json', { properties: { title: 'edited' } })
    await d.waitForEvent({ event: 'pushed', path: 'content/home.json' })
    expect(await serverTitle(w.server, 'home')).toBe('edited')
    const made = requests()
    expect(made.filter(isListing)).toEqual([])
    // The token is checked before the first write (then stands for a minute), and the item read.
    expect(made.filter((r) => r.startsWith('GET')).sort()).toEqual([
      'GET /api/demo/live/content/home',
      'GET /api/user',
    ])
    expect(made.filter((r) => !r.startsWith('GET'))).toHaveLength(1)
  })

  test('a new file is created on the server', async () => {
    const w = await world(dialect)
    const d = await watched(w)
    const requests = requestsFrom(w)
    await w.writeJson('content/about.json', contentFile('about', { properties: { title: 'About us' } }))
    await d.waitForEvent({ event: 'pushed', path: 'content/about.json', action: 'push' })
    expect(await serverTitle(w.server, 'about')).toBe('About us')
    expect(requests().filter(isListing)).toEqual([])
  })

  test('an item changed on both sides is a conflict: neither side is overwritten', async () => {
    const w = await world(dialect)
    const d = await watched(w)
    await w.setContent('news', { properties: { title: 'remote' } })
    await w.editJson('content/news.json', { properties: { title: 'local' } })
    await d.waitForEvent({ event: 'conflict', path: 'content/news.json' })
    expect(await serverTitle(w.server, 'news')).toBe('remote')
    expect(await w.readJson('content/news.json')).toMatchObject({ properties: { title: 'local' } })
    expect(await w.exists('.cms-sync/conflicts/content/news.json.remote')).toBe(true)
  })

  test('a deleted file deletes its item; too many at once are held, with the commands to settle them', async () => {
    const w = await world(dialect)
    const d = await watched(w)
    await w.remove('content/shop.json')
    await d.waitForEvent({ event: 'pushed', path: 'content/shop.json', action: 'delete-remote' })
    expect(await w.server.get('content', 'shop')).toBeUndefined()

    // Two of the three left (over safety.maxDeletePercent, 50): nothing is deleted.
    await Promise.all([w.remove('content/news.json'), w.remove('content/contact.json')])
    const { held } = await d.waitForEvent({ event: 'held' })
    expect(held).toEqual([
      expect.objectContaining({
        guard: 'max-delete',
        side: 'local',
        action: 'delete-remote',
        paths: ['content/contact.json', 'content/news.json'],
        release: 'cms-sync resolve --keep local content/contact.json content/news.json',
        drop: 'cms-sync restore content/contact.json content/news.json',
      }),
    ])
    expect(d.events.filter((e) => e.event === 'error')).toEqual([])
    expect(await w.server.get('content', 'news')).toBeDefined()
    expect(await w.server.get('content', 'contact')).toBeDefined()
  })

  test('a file renamed by hand does not delete its item', async () => {
    const w = await world(dialect)
    const d = await watched(w)
    // mv home.json start.json: start.json still says id "home".
    await rename(w.file('content/home.json'), w.file('content/start.json'))
    const held = await d.waitForEvent({ event: 'failed', path: 'content/home.json' })
    expect(held.error).toContain('content/start.json still says id "home"')
    expect(await w.server.get('content', 'home')).toBeDefined()
  })

  test('a delete is held while a file outside the batch claims the id', async () => {
    const w = await world(dialect)
    const d = await watched(w)
    // A copy under another name first (its own batch: it cannot be pushed, its id does not match).
    await writeFile(w.file('content/start.json'), JSON.stringify(await w.readJson('content/news.json')))
    await d.waitForEvent({ event: 'failed', path: 'content/start.json' })
    // Then the original goes, in a batch of its own.
    await w.remove('content/news.json')
    const held = await d.waitForEvent({ event: 'failed', path: 'content/news.json' })
    expect(held.error).toContain('content/start.json still says id "news"')
    expect(await w.server.get('content', 'news')).toBeDefined()
  })

  test('the remote poll still finds server edits and pulls them', async () => {
    const w = await world(dialect)
    const d = await watched(w, 1)
    await w.setContent('contact', { properties: { title: 'from the server' } })
    await d.waitForEvent({ event: 'pulled', path: 'content/contact.json' })
    expect(await w.readJson('content/contact.json')).toMatchObject({
      properties: { title: 'from the server' },
    })
  })

  test('a poll over a quiet workspace is one 304 per kind; a server edit is still pulled', async () => {
    const w = await world(dialect)
    const d = await watched(w, 1)
    // The daemon tells each full request's end, after its run (if any): a `polled` event saying
    // what it looked at and what it planned. The log file is appended in batches, behind them.
    const eventsFrom = d.events.length
    const polls = () => d.events.slice(eventsFrom).filter((e) => e.event === 'polled')
    const requests = requestsFrom(w)
    const answeredFrom = w.proxy.answered.length
    await waitFor(() => polls().length >= 2, { what: 'two polls', timeoutMs: 8_000 })
    // Listed, found nothing new: no plan, no run.
    expect(polls().map((e) => [e.listings, e.planned])).toEqual(polls().map(() => ['unchanged', 'nothing']))
    expect(requests().filter((r) => !isListing(r) && !r.endsWith('/media') && !r.endsWith('/forms'))).toEqual(
      [],
    )
    // Each listing was asked for with its ETag and answered "not modified", without a body.
    const polled = w.proxy.answered.slice(answeredFrom).filter((a) => isListing(a.replace(/ \d+$/, '')))
    expect(polled.length).toBeGreaterThanOrEqual(4)
    expect(polled.filter((a) => !a.endsWith(' 304'))).toEqual([])

    await w.setContent('shop', { properties: { title: 'changed on the server' } })
    const found = await d.waitForEvent({ event: 'polled', listings: 'changed' })
    expect(found.planned).not.toBe('nothing')
    expect(d.events).toContainEqual(expect.objectContaining({ event: 'pulled', path: 'content/shop.json' }))
    expect(((await w.readJson('content/shop.json')).properties as { title: string }).title).toBe(
      'changed on the server',
    )
  })

  test('an edit of an inherited item makes the child its own copy first; the parent keeps its own', async () => {
    const family = await inheritingWorld(dialect)
    const w = family.world
    cleanups.push(() => w.close())
    expect((await w.cli('sync')).exitCode).toBe(0)
    const d = await watched(w)
    const requests = requestsFrom(w)
    await w.editJson('content/inherited-page.json', { properties: { title: 'Edited in the child' } })
    await d.waitForEvent({ event: 'pushed', path: 'content/inherited-page.json' })
    const made = requests()
    const pull = made.indexOf('POST /api/demo/live/content/pull/inherited-page')
    expect(pull).toBeGreaterThanOrEqual(0)
    expect(made.indexOf('POST /api/demo/live/content/inherited-page')).toBeGreaterThan(pull)
    expect(await w.server.get('content', 'inherited-page')).toMatchObject({
      sync: { isRemote: false },
      properties: { title: 'Edited in the child' },
    })
    expect(await serverTitle(family.parentClient, 'inherited-page')).toBe('inherited-page from the parent')
  })

  test('a media file added while watching is uploaded (media take a full plan)', async () => {
    const w = await startWorld(dialect, { resources: ['schemas', 'content', 'media'] })
    cleanups.push(() => w.close())
    expect((await w.cli('sync')).exitCode).toBe(0)
    const d = await watched(w)
    // In one batch with a content edit: the batch takes a full plan, scoped to its paths.
    await w.editJson('content/home.json', { properties: { title: 'with a logo' } })
    await mkdir(w.file('media'), { recursive: true })
    await writeFile(w.file('media/logo.svg'), '<svg/>')
    await d.waitForEvent({ event: 'pushed', path: 'media/logo.svg' })
    await d.waitForEvent({ event: 'pushed', path: 'content/home.json' })
    expect(await serverTitle(w.server, 'home')).toBe('with a logo')
    await waitFor(async () => (await readFile(w.file('media.yaml'), 'utf8')).includes('logo.svg'), {
      what: 'logo.svg in media.yaml',
    })
  })

  test('a junk-looking media file the server has (notes.tmp) is watched and pushed; local junk is not', async () => {
    const w = await startWorld(dialect, { resources: ['media'], content: [] })
    cleanups.push(() => w.close())
    const api = createMediaApi(w.server)
    const scratch = w.file('../notes-upload.bin')
    await writeFile(scratch, 'server notes\n')
    const { id } = await api.upload({ path: scratch, size: 13, name: 'upload.bin' })
    await api.rename(id, 'notes.tmp')
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(await readFile(w.file('media/notes.tmp'), 'utf8')).toBe('server notes\n')
    const d = await watched(w)
    await writeFile(w.file('media/draft.tmp'), 'local junk\n')
    await writeFile(w.file('media/notes.tmp'), 'edited notes\n')
    await d.waitForEvent({ event: 'pushed', path: 'media/notes.tmp' })
    await api.download(id, scratch)
    expect(await readFile(scratch, 'utf8')).toBe('edited notes\n')
    expect((await api.list()).map((m) => m.name)).toEqual(['notes.tmp'])
  })
})
