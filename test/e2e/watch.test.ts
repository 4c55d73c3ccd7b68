// `cms-sync watch` against the emulator, both dialects: local edits, creations, deletions and
// renames reach the server within moments; remote edits reach the workspace; our own writes are
// never echoed back.

import { rename, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { contentFile } from '../helpers/fixtures.js'
import { type Dialect, syncedWorld, type World } from '../helpers/sync-world.js'
import { serverTitle, setWatchConfig, watchInProcess } from '../helpers/watch.js'
import { waitFor } from '../watch/helpers.js'

let world: World | undefined
let watching: ReturnType<typeof watchInProcess> | undefined
afterEach(async () => {
  await watching?.stop()
  await world?.close()
  watching = undefined
  world = undefined
})

async function watchedWorld(dialect: Dialect): Promise<{ w: World; d: ReturnType<typeof watchInProcess> }> {
  world = await syncedWorld(dialect)
  await setWatchConfig(world.root)
  watching = watchInProcess(world.root, world.env)
  // Ready comes first; the start-up reconcile is done once it says so.
  await watching.waitForEvent({ event: 'reconciled' })
  return { w: world, d: watching }
}

const title = (w: World, id: string) => serverTitle(w.server, id)

describe.each(['spec', 'upstream'] as const)('watch (%s dialect)', (dialect) => {
  test('an edit, a new file and a deletion are pushed while watching', async () => {
    const { w, d } = await watchedWorld(dialect)
    await w.editJson('content/home.json', { properties: { title: 'edited' } })
    await d.waitForEvent({ event: 'pushed', path: 'content/home.json' })
    expect(await title(w, 'home')).toBe('edited')

    await w.writeJson('content/about.json', contentFile('about'))
    await d.waitForEvent({ event: 'pushed', path: 'content/about.json' })
    expect(await w.server.get('content', 'about')).toMatchObject({ properties: { title: 'about' } })

    await w.remove('content/shop.json')
    await d.waitForEvent({ event: 'pushed', path: 'content/shop.json', action: 'delete-remote' })
    expect(await w.server.get('content', 'shop')).toBeUndefined()
    expect(d.events.filter((e) => e.event === 'failed' || e.event === 'conflict')).toEqual([])
  })

  test('a rename reaches the server as the new item, the old one gone', async () => {
    const { w, d } = await watchedWorld(dialect)
    // The file name is the id: renaming the file and its id is how an item gets a new id.
    await rename(w.file('content/news.json'), w.file('content/press.json'))
    await w.editJson('content/press.json', { id: 'press' })
    await waitFor(async () => (await w.server.get('content', 'press')) !== undefined, {
      timeoutMs: 8_000,
      what: 'press on the server',
    })
    await waitFor(async () => (await w.server.get('content', 'news')) === undefined, { what: 'news gone' })
    expect(await title(w, 'press')).toBe('news')
    await d.waitForEvent({ event: 'pushed', path: 'content/news.json', action: 'delete-remote' })
  })

  test("an editor's atomic save (temp file + rename) is one change, the temp file never synced", async () => {
    const { w, d } = await watchedWorld(dialect)
    const text = `${JSON.stringify(contentFile('contact', { properties: { title: 'saved' } }), null, 2)}\n`
    await writeFile(w.file('content/contact.json.tmp'), text)
    await rename(w.file('content/contact.json.tmp'), w.file('content/contact.json'))
    await d.waitForEvent({ event: 'pushed', path: 'content/contact.json' })
    expect(await title(w, 'contact')).toBe('saved')
    expect(d.events.filter((e) => e.path?.endsWith('.tmp') || e.event === 'failed')).toEqual([])
  })

  test('a remote edit is pulled, and the pulled file is not pushed back', async () => {
    const { w, d } = await watchedWorld(dialect)
    const putsBefore = w.proxy.seen.filter((r) => r.startsWith('PUT') || r.startsWith('POST')).length
    await w.setContent('news', { properties: { title: 'from the server' } })
    await d.waitForEvent({ event: 'pulled', path: 'content/news.json' })
    expect(await w.readJson('content/news.json')).toMatchObject({ properties: { title: 'from the server' } })
    // A local edit after it: by the time it is pushed, an echo of the pull would have been too.
    await w.editJson('content/home.json', { properties: { title: 'later' } })
    await d.waitForEvent({ event: 'pushed', path: 'content/home.json' })
    expect(d.events.filter((e) => e.event === 'pushed' && e.path === 'content/news.json')).toEqual([])
    const writes = w.proxy.seen.filter((r) => r.startsWith('PUT') || r.startsWith('POST'))
    expect(writes.length - putsBefore).toBe(1)
  })
})
