// Watch never freezes and never goes silent: a guard tripped by a server change holds only
// what it is about (and says so in status, doctor and watch's events, with the commands that
// release or drop it) while everything else keeps syncing; an edit that raced a write is
// planned again, where the field merge applies.

import { afterEach, describe, expect, test } from 'vitest'
import { names } from '../../src/emulator/store.js'
import { type Dialect, startWorld, type World } from '../helpers/sync-world.js'
import { serverTitle, setWatchConfig, watchInProcess } from '../helpers/watch.js'
import { waitFor } from '../watch/helpers.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function world(dialect: Dialect, content?: string[]): Promise<World> {
  const w = await startWorld(dialect, content ? { content } : {})
  cleanups.push(() => w.close())
  const first = await w.cli('sync')
  if (first.exitCode !== 0) throw new Error(`the first sync failed: ${first.stderr}`)
  return w
}

describe.each(['spec', 'upstream'] as const)('watch never freezes (%s dialect)', (dialect) => {
  test('a both-sides edit of different fields that raced a write is merged by the next poll', async () => {
    const w = await world(dialect)
    const collection = names.env('demo', 'live', 'content')
    // The local edit is made while no daemon runs: the start-up reconcile (a full run) pushes it.
    await w.editJson('content/home.json', { properties: { title: 'local title' } })
    // Another client changes another field of the same item after the listing, just before the
    // executor's check of the item before its write.
    let fired = false
    w.proxy.override = (method, route) => {
      if (!fired && method === 'GET' && route.endsWith('/content/home')) {
        fired = true
        const current = w.emulator.store.get<Record<string, unknown>>(collection, 'home')!
        w.emulator.store.put(collection, 'home', {
          ...current,
          sort: 7,
          updateDate: new Date(Date.parse('2030-01-01T00:00:00Z')).toISOString(),
        })
      }
      return undefined
    }
    await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
    const d = watchInProcess(w.root, w.env)
    cleanups.push(() => d.stop())
    await d.waitForEvent({ event: 'reconciled' })
    expect(fired).toBe(true)
    expect(d.events).toContainEqual(expect.objectContaining({ event: 'conflict', path: 'content/home.json' }))
    // The next poll plans it again: both edits land on both sides.
    await d.waitForEvent({ event: 'merged', path: 'content/home.json' }, 10_000)
    expect(await serverTitle(w.server, 'home')).toBe('local title')
    expect((await w.server.get('content', 'home'))?.sort).toBe(7)
    expect(await w.readJson('content/home.json')).toMatchObject({
      sort: 7,
      properties: { title: 'local title' },
    })
    const status = await w.cli('--json', 'status')
    expect(status.json.changes).toEqual([])
  })
})

describe.each(['spec', 'upstream'] as const)(
  'a guard holds only what it is about (%s dialect)',
  (dialect) => {
    test('another client deletes 25 of 36 items: those deletions are held and shown, everything else syncs', async () => {
      const ids = Array.from({ length: 35 }, (_, i) => `page-${String(i).padStart(2, '0')}`)
      const w = await world(dialect, ids)
      const gone = ids.slice(0, 25)
      await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
      const d = watchInProcess(w.root, w.env)
      cleanups.push(() => d.stop())
      await d.waitForEvent({ event: 'reconciled' })

      for (const id of gone) await w.server.remove('content', id)
      const heldEvent = await d.waitForEvent({ event: 'held' }, 10_000)
      const held = heldEvent.held
      expect(held).toHaveLength(1)
      const paths = gone.map((id) => `content/${id}.json`)
      expect(held[0]).toMatchObject({
        guard: 'max-delete',
        side: 'remote',
        kind: 'content',
        action: 'delete-local',
        paths,
        count: 25,
        release: `cms-sync resolve --keep remote ${paths.join(' ')}`,
        drop: `cms-sync resolve --keep local ${paths.join(' ')}`,
      })
      expect(d.events.filter((e) => e.event === 'error')).toEqual([])

      // Everything else still syncs both ways.
      await w.setContent('page-30', { properties: { title: 'edited on the server' } })
      await d.waitForEvent({ event: 'pulled', path: 'content/page-30.json' }, 10_000)
      await w.editJson('content/page-31.json', { properties: { title: 'edited here' } })
      await d.waitForEvent({ event: 'pushed', path: 'content/page-31.json' }, 10_000)
      expect(await serverTitle(w.server, 'page-31')).toBe('edited here')
      for (const id of gone) expect(await w.exists(`content/${id}.json`)).toBe(true)

      // status and doctor show the same held changes, in the same shape.
      const status = await w.cli('--json', 'status')
      const { since, ...shape } = held[0]
      expect(typeof since).toBe('string')
      expect(status.json.held).toEqual([shape])
      const doctor = await w.cli('--json', 'doctor')
      expect(doctor.json.held).toEqual(status.json.held)
      expect(doctor.json.checks).toContainEqual(expect.objectContaining({ name: 'held', ok: false }))

      // The drop command works while watch runs: these local copies go back to the server.
      const kept = paths.slice(0, 5)
      const drop = await w.cli('resolve', '--keep', 'local', ...kept)
      expect(drop.exitCode, drop.stderr).toBe(0)
      for (const id of gone.slice(0, 5)) expect(await w.server.get('content', id)).toMatchObject({ id })
      // The release command too: the other deletions are carried out here.
      const release = await w.cli('resolve', '--keep', 'remote', ...paths.slice(5))
      expect(release.exitCode, release.stderr).toBe(0)
      for (const id of gone.slice(5)) expect(await w.exists(`content/${id}.json`)).toBe(false)
      for (const id of gone.slice(0, 5)) expect(await w.exists(`content/${id}.json`)).toBe(true)
      await waitFor(() => d.events.some((e) => e.event === 'held' && e.held.length === 0), {
        what: 'nothing held any more',
      })
      expect((await w.cli('--json', 'status')).json.held).toBeUndefined()
    })

    test('the only custom schema renamed on the server: its deletion is held, the new schema and content edits sync', async () => {
      const w = await world(dialect)
      await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
      const d = watchInProcess(w.root, w.env)
      cleanups.push(() => d.stop())
      await d.waitForEvent({ event: 'reconciled' })

      // What the CMS's own editor does when a schema's id is changed: the new id, the old one gone.
      const section = (await w.server.get('schema', 'section'))!
      await w.server.put('schema', 'article', { ...section, id: 'article' })
      await w.server.remove('schema', 'section')
      expect(await w.server.get('schema', 'section')).toBeUndefined()
      const heldEvent = await d.waitForEvent({ event: 'held' }, 10_000)
      expect(heldEvent.held).toEqual([
        expect.objectContaining({ guard: 'max-delete', kind: 'schema', paths: ['schemas/section.json'] }),
      ])
      await d.waitForEvent({ event: 'pulled', path: 'schemas/article.json' }, 10_000)
      expect(await w.exists('schemas/section.json')).toBe(true)
      await w.setContent('news', { properties: { title: 'still pulled' } })
      await d.waitForEvent({ event: 'pulled', path: 'content/news.json' }, 10_000)

      // With the new schema synced, the old one is no longer the kind's last item: its deletion
      // is an ordinary one (the guard's own rule), carried out with the file kept in trash.
      await d.waitForEvent({ event: 'pulled', path: 'schemas/section.json', action: 'delete-local' }, 10_000)
      // The last thing said (a poll's own note aside): nothing is held any more.
      expect(d.events.filter((e) => e.event !== 'polled').at(-1)).toMatchObject({ event: 'held', held: [] })
      expect(d.events.filter((e) => e.event === 'error')).toEqual([])
    })
  },
)
