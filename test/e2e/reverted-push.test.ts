// An editor's stale save reverts a developer's push: the CMS's editor saves the whole item it
// loaded, without a precondition, so an editor who opened an item before the push and saves
// after it puts the developer's fields back. cms-sync cannot stop that, but it knows what it
// pushed: such a pull is told as "reverted on the server" (status, the run, the log, watch's
// events), the file as pushed is kept in .cms-sync/trash/, and `cms-sync push --again` sends
// the reverted leaves again, keeping the editor's own edits of other leaves.

import { readFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { syncedWorld, type World } from '../helpers/sync-world.js'
import { serverTitle, watchReconciled } from '../helpers/watch.js'

let world: World | undefined
const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  await world?.close()
  world = undefined
})

/** The editor's copy, loaded before the developer pushes (the UI holds the whole item). */
async function editorLoads(w: World, id: string) {
  return structuredClone((await w.server.get('content', id))!)
}

describe.each(['spec', 'upstream'] as const)('%s dialect', (dialect) => {
  test('status, pull and the log tell the revert; push --again sends our leaves back, the editor keeps theirs', async () => {
    const w = await syncedWorld(dialect)
    world = w
    const stale = await editorLoads(w, 'home')
    await w.editJson('content/home.json', { properties: { title: 'Developer title' } })
    expect((await w.cli('push')).exitCode).toBe(0)
    // The editor changes another field and saves the whole item as loaded.
    await w.server.put('content', 'home', { ...stale, sort: 7 })
    expect(await serverTitle(w.server, 'home')).toBe('home')

    const status = await w.cli('status')
    expect(status.stdout).toMatch(
      /pull +content\/home.json[^\n]*\n +reverted on the server: \/properties\/title \(ours "Developer title", now "home"\)/,
    )
    const json = await w.cli('--json', 'status')
    expect(json.json.changes[0]).toMatchObject({
      path: 'content/home.json',
      action: 'pull',
      reverted: [{ pointer: '/properties/title', ours: 'Developer title', server: 'home' }],
    })

    const pull = await w.cli('pull')
    expect(pull.exitCode).toBe(0)
    expect(pull.stdout).toMatch(/reverted on the server: \/properties\/title/)
    expect(pull.stdout).toMatch(/cms-sync push --again content\/home.json/)
    // The mirror holds what the server holds; ours is in trash, and the log says so.
    expect(await w.readJson('content/home.json')).toMatchObject({ sort: 7, properties: { title: 'home' } })
    const log = await readFile(w.file('.cms-sync/logs/cms-sync.log'), 'utf8')
    expect(log).toMatch(/reverted on the server: content\/home.json/)
    const after = await w.cli('--json', 'status')
    expect(after.json.reverted).toHaveLength(1)
    const { trash } = after.json.reverted[0]
    expect(trash).toMatch(/^\.cms-sync\/trash\/.+\/content\/home.json$/)
    expect(JSON.parse(await readFile(w.file(trash), 'utf8')).properties.title).toBe('Developer title')
    const text = await w.cli('status')
    expect(text.stdout).toMatch(/reverted +content\/home.json: the server put back \/properties\/title/)
    const doctor = await w.cli('--json', 'doctor')
    expect(doctor.json.checks.find((c: { name: string }) => c.name === 'reverted')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('content/home.json'),
      hint: expect.stringContaining('cms-sync push --again'),
    })
    expect(text.stdout).not.toMatch(/^clean/m)

    const again = await w.cli('push', '--again', 'content/home.json')
    expect(again.exitCode, again.stderr).toBe(0)
    expect(await serverTitle(w.server, 'home')).toBe('Developer title')
    expect((await w.server.get('content', 'home'))?.sort).toBe(7)
    const settled = await w.cli('--json', 'status')
    expect(settled.json.clean).toBe(true)
    expect(settled.json.reverted).toBeUndefined()
  })

  test('a revert that meets a local edit of another field (a merge) is told too', async () => {
    const w = await syncedWorld(dialect)
    world = w
    const stale = await editorLoads(w, 'home')
    await w.editJson('content/home.json', { properties: { title: 'Developer title' } })
    expect((await w.cli('push')).exitCode).toBe(0)
    await w.server.put('content', 'home', stale)
    await w.editJson('content/home.json', { sort: 9 })
    const sync = await w.cli('--json', 'sync')
    expect(sync.exitCode, sync.stdout).toBe(0)
    expect(sync.json.applied).toMatchObject([
      { path: 'content/home.json', action: 'merge', reverted: [{ pointer: '/properties/title' }] },
    ])
    expect((await w.cli('--json', 'status')).json.reverted).toMatchObject([{ path: 'content/home.json' }])
  })

  test('an editor who changes the same field to a new value is an edit, not a revert', async () => {
    const w = await syncedWorld(dialect)
    world = w
    await w.editJson('content/home.json', { properties: { title: 'Developer title' } })
    expect((await w.cli('push')).exitCode).toBe(0)
    await w.setContent('home', { properties: { title: 'Editor title' } })
    const pull = await w.cli('--json', 'pull')
    expect(pull.json.applied[0].reverted).toBeUndefined()
    expect((await w.cli('--json', 'status')).json.reverted).toBeUndefined()
  })

  test('watch tells the revert as an event', async () => {
    const w = await syncedWorld(dialect)
    world = w
    const stale = await editorLoads(w, 'news')
    const d = await watchReconciled(w, cleanups)
    await w.editJson('content/news.json', { properties: { title: 'Developer news' } })
    await d.waitForEvent({ event: 'pushed', path: 'content/news.json' })
    await w.server.put('content', 'news', stale)
    const event = await d.waitForEvent({ event: 'reverted', path: 'content/news.json' })
    expect(event.leaves).toEqual([{ pointer: '/properties/title', ours: 'Developer news', server: 'news' }])
    expect(event.trash).toMatch(/^\.cms-sync\/trash\//)
    // push --again while watch holds the workspace: the daemon carries it out.
    const again = await w.cli('push', '--again', 'content/news.json')
    expect(again.exitCode, again.stderr).toBe(0)
    expect(await serverTitle(w.server, 'news')).toBe('Developer news')
  })
})
