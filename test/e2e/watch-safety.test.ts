// What keeps `cms-sync watch` from losing or spreading damage: a remote change to an unsynced
// local edit is a conflict (never an overwrite), a mass change pauses pushing until an explicit
// push, a server that goes away and comes back gets every queued edit, and a .cmsyncignore
// change takes effect at once.

import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import { createRemoteClient, type RemoteClient } from '../../src/remote/index.js'
import { cli } from '../helpers/cli.js'
import { contentFile, contentOf, SECTION_SCHEMA } from '../helpers/fixtures.js'
import { syncedWorld, type World, writeConfig } from '../helpers/sync-world.js'
import { serverTitle, setWatchConfig, watchInProcess, watchReconciled } from '../helpers/watch.js'
import { waitFor } from '../watch/helpers.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** The world watched (a remote poll every second, unless asked), start-up reconcile done. */
const watched = (w: World, pollSeconds = 1) => watchReconciled(w, cleanups, pollSeconds)

async function world(): Promise<World> {
  const w = await syncedWorld('spec')
  cleanups.push(() => w.close())
  return w
}

test('a remote change to an item with an unsynced local edit is a conflict, kept and shown by status', async () => {
  const w = await world()
  const d = await watched(w, 3600) // no poll in between: the local edit's run sees both sides
  await w.setContent('home', { properties: { title: 'remote' } })
  await w.editJson('content/home.json', { properties: { title: 'local' } })

  await d.waitForEvent({ event: 'conflict', path: 'content/home.json' })
  expect(await w.readJson('content/home.json')).toMatchObject({ properties: { title: 'local' } })
  expect(await w.server.get('content', 'home')).toMatchObject({ properties: { title: 'remote' } })
  const copy = JSON.parse(
    await readFile(path.join(w.root, '.cms-sync/conflicts/content/home.json.remote'), 'utf8'),
  )
  expect(copy).toMatchObject({ properties: { title: 'remote' } })

  const status = await w.cli('--json', 'status')
  expect(status.json.changes).toContainEqual(
    expect.objectContaining({ path: 'content/home.json', action: 'conflict' }),
  )
  const logged = await readFile(path.join(w.root, '.cms-sync/logs/cms-sync.log'), 'utf8')
  expect(logged).toContain('"event":"conflict"')
})

test('many files at once pause pushing (pulls go on) until an explicit push', async () => {
  const w = await world()
  const d = await watched(w)
  const ids = Array.from({ length: 60 }, (_, i) => `bulk-${i}`)
  await Promise.all(ids.map((id) => w.writeJson(`content/${id}.json`, contentFile(id))))

  const paused = await d.waitForEvent({ event: 'paused' })
  expect(paused).toMatchObject({ reason: 'mass-change', count: 60 })
  // Pulling goes on while paused.
  await w.setContent('news', { properties: { title: 'remote while paused' } })
  await d.waitForEvent({ event: 'pulled', path: 'content/news.json' })
  expect((await w.server.list('content')).filter((c) => String(c.id).startsWith('bulk-'))).toEqual([])
  expect(d.events.filter((e) => e.event === 'pushed')).toEqual([])

  // Stop watching, push explicitly: everything goes up and the pause is lifted.
  expect(await d.stop()).toBe(0)
  const push = await w.cli('push')
  expect(push.exitCode).toBe(0)
  expect((await w.server.list('content')).filter((c) => String(c.id).startsWith('bulk-'))).toHaveLength(60)
  expect(await w.exists('.cms-sync/watch-paused.json')).toBe(false)
})

test('a mass change made while no daemon ran pauses the start-up reconcile too', async () => {
  const w = await world()
  const ids = Array.from({ length: 60 }, (_, i) => `offline-${i}`)
  for (const id of ids) await w.writeJson(`content/${id}.json`, contentFile(id))
  const d = await watched(w)
  expect(d.events.find((e) => e.event === 'paused')).toMatchObject({ reason: 'mass-change', count: 60 })
  expect(d.events.filter((e) => e.event === 'pushed')).toEqual([])
  expect((await w.server.list('content')).filter((c) => String(c.id).startsWith('offline-'))).toEqual([])
})

test('a server that goes away and comes back on the same port gets every queued edit', async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'cms-sync-data-'))
  let emulator: Emulator = await startEmulator({ port: 0, dialect: 'spec', dataDir })
  cleanups.push(() => emulator.close())
  const port = emulator.port
  const token = emulator.token()
  const server: RemoteClient = await createRemoteClient({
    server: emulator.url,
    project: 'demo',
    environment: 'live',
    token,
    dialect: 'spec',
    rateLimit: { requestsPerSecond: 1000, concurrency: 4 },
  })
  cleanups.push(() => server.close())
  await server.put('schema', 'section', SECTION_SCHEMA)
  for (const id of ['home', 'news']) await server.put('content', id, contentOf(id))
  const root = path.join(await mkdtemp(path.join(tmpdir(), 'cms-sync-e2e-')), 'site')
  await (await import('node:fs/promises')).mkdir(root)
  await writeConfig(root, emulator.url, 'spec')
  const env = { CMS_SYNC_TOKEN: token, XDG_CONFIG_HOME: path.join(root, '..', 'xdg') }
  expect((await cli(['-C', root, 'sync'], { cwd: root, env })).exitCode).toBe(0)
  await setWatchConfig(root)
  const d = watchInProcess(root, env)
  cleanups.push(() => d.stop())
  await d.waitForEvent({ event: 'ready' })

  await emulator.close()
  const edit = async (id: string, title: string) => {
    const file = path.join(root, 'content', `${id}.json`)
    await writeFile(file, `${JSON.stringify(contentFile(id, { properties: { title } }), null, 2)}\n`)
  }
  await edit('home', 'queued one')
  await d.waitForEvent({ event: 'offline' })
  await edit('news', 'queued two')

  emulator = await startEmulator({ port, dialect: 'spec', dataDir })
  await d.waitForEvent({ event: 'online' }, 20_000)
  const titleOf = (id: string) => serverTitle(server, id)
  await waitFor(
    async () => (await titleOf('home')) === 'queued one' && (await titleOf('news')) === 'queued two',
    {
      timeoutMs: 10_000,
      what: 'both queued edits on the server',
    },
  )
}, 40_000)

test('a .cmsyncignore change takes effect at once: a file it stops ignoring is synced and watched', async () => {
  const w = await world()
  await w.writeJson('content/secret.json', contentFile('secret'))
  await writeFile(w.file('.cmsyncignore'), 'content/secret.json\n')
  const d = await watched(w, 3600)
  await w.editJson('content/secret.json', { properties: { title: 'still ignored' } })
  await w.editJson('content/home.json', { properties: { title: 'not ignored' } })
  await d.waitForEvent({ event: 'pushed', path: 'content/home.json' })
  expect(await w.server.get('content', 'secret')).toBeUndefined()

  await writeFile(w.file('.cmsyncignore'), '# nothing ignored\n')
  await d.waitForEvent({ event: 'pushed', path: 'content/secret.json' })
  await w.editJson('content/secret.json', { properties: { title: 'watched now' } })
  await waitFor(async () => (await serverTitle(w.server, 'secret')) === 'watched now', {
    what: 'the edit of a file no longer ignored on the server',
  })
})
