// The engine as the watch daemon's work queue runs it (src/watch/run-policy.ts), against the real
// emulator.

import { writeFile } from 'node:fs/promises'
import { afterEach, expect, test } from 'vitest'
import { createLogger } from '../../src/log/logger.js'
import { createRemoteClient, type RemoteClient } from '../../src/remote/index.js'
import { createWatchRuns } from '../../src/watch/run-policy.js'
import { createWatchEngine } from '../../src/watch/watch-engine.js'
import { CODECS } from '../../src/workspace/codecs.js'
import { loadIgnoreRules } from '../../src/workspace/ignore-rules.js'
import { watchStats } from '../../src/workspace/stat-check.js'
import { contentFile } from '../helpers/fixtures.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'

let world: World
let client: RemoteClient
afterEach(async () => {
  await client?.close()
  await world?.close()
})

async function engineFor(w: World, paused = false, rehash?: () => boolean) {
  return (await engineAndRuns(w, paused, rehash)).runs
}

async function engineAndRuns(
  w: World,
  paused = false,
  rehash?: () => boolean,
  idle?: { editingMs: number; now: () => number },
) {
  client = await createRemoteClient({
    server: w.proxy.url,
    project: 'demo',
    environment: 'live',
    token: w.emulator.token(),
    dialect: 'spec',
    rateLimit: { requestsPerSecond: 1000, concurrency: 4 },
    maxRetries: 0,
  })
  const deps = {
    root: w.root,
    target: { server: w.proxy.url, project: 'demo', environment: 'live' },
    client,
    logger: createLogger(),
    codecs: CODECS,
    maxDeletePercent: 50,
  }
  const rules = await loadIgnoreRules(w.root)
  const stats = watchStats(
    w.root,
    CODECS.map((codec) => codec.kind),
    (rel, isDir) => rules.ignores(rel, isDir),
  )
  const engine = createWatchEngine(deps)
  const runs = createWatchRuns(engine, deps, {
    stats,
    paused: async () => paused,
    ...(rehash ? { rehash } : {}),
    ...idle,
  })
  return { engine, runs }
}

async function runFor(w: World, paused = false) {
  return (await engineFor(w, paused)).run
}

const context = (full = false) => ({ full, signal: new AbortController().signal })

test('dirty paths are synced, and only those', async () => {
  world = await syncedWorld('spec')
  await world.editJson('content/home.json', { properties: { title: 'one' } })
  await world.editJson('content/news.json', { properties: { title: 'two' } })
  const run = await runFor(world)
  const result = await run(new Set(['content/home.json']), context())
  expect(result).toMatchObject({
    kind: 'done',
    retryPaths: [],
    outcome: { applied: [{ path: 'content/home.json' }] },
  })
  expect(await world.server.get('content', 'news')).toMatchObject({ properties: { title: 'news' } })
})

test('while paused, only the pull side runs', async () => {
  world = await syncedWorld('spec')
  await world.editJson('content/home.json', { properties: { title: 'local' } })
  await world.setContent('news', { properties: { title: 'remote' } })
  const run = await runFor(world, true)
  const result = await run(new Set(), context(true))
  expect(result).toMatchObject({
    kind: 'done',
    outcome: { applied: [{ path: 'content/news.json', action: 'pull' }] },
  })
  expect(await world.server.get('content', 'home')).toMatchObject({ properties: { title: 'home' } })
})

test('a server out of reach is offline, not an error, and changes nothing', async () => {
  world = await syncedWorld('spec')
  await world.editJson('content/home.json', { properties: { title: 'local' } })
  world.proxy.override = () => ({ status: 503, body: 'down for maintenance' })
  const run = await runFor(world)
  expect(await run(new Set(['content/home.json']), context())).toMatchObject({ kind: 'offline' })
  world.proxy.override = undefined
  expect(await world.server.get('content', 'home')).toMatchObject({ properties: { title: 'home' } })
})

test('an aborted run stops between items', async () => {
  world = await syncedWorld('spec')
  await world.editJson('content/home.json', { properties: { title: 'local' } })
  const controller = new AbortController()
  controller.abort()
  const run = await runFor(world)
  const result = await run(new Set(['content/home.json']), { full: false, signal: controller.signal })
  expect(result).toMatchObject({ kind: 'done', outcome: { applied: [] } })
})

const contentRequests = (w: World, from: number) =>
  w.proxy.answered.slice(from).filter((a) => /^GET \/api\/demo\/live\/content/.test(a))

test('the deep rescan asks every listing unconditionally: a recorded validator cannot hide a change', async () => {
  world = await syncedWorld('spec')
  let deep = false
  const runs = await engineFor(world, false, () => deep)
  const listings = (from: number) =>
    world.proxy.answered.slice(from).filter((a) => /^GET \/api\/demo\/live\/(content|schemas) /.test(a))
  let from = world.proxy.answered.length
  expect(await runs.run(new Set(), context(true))).toMatchObject({ kind: 'done' })
  expect(listings(from).map((a) => a.slice(-3))).toEqual(['304', '304'])
  deep = true
  from = world.proxy.answered.length
  expect(await runs.run(new Set(), context(true))).toMatchObject({ kind: 'done', whole: true })
  expect(listings(from).map((a) => a.slice(-3))).toEqual(['200', '200'])
  for (const line of world.proxy.answered.slice(from)) expect(line).not.toMatch(/ 304$/)
})

test('a quiet poll stops at 304 listings; a moved file is planned alone; a changed listing plans everything', async () => {
  world = await syncedWorld('spec')
  const runs = await engineFor(world)
  const listings = (from: number) =>
    world.proxy.answered.slice(from).filter((a) => /^GET \/api\/demo\/live\/(content|schemas) /.test(a))
  let from = world.proxy.answered.length
  expect(await runs.run(new Set(), context(true))).toMatchObject({ kind: 'done', whole: true })
  // The pull that made the world recorded the listings' validators in the state: even the first
  // full run reads no listing body.
  expect(listings(from).map((a) => a.slice(-3))).toEqual(['304', '304'])
  // Nothing changed on either side: the poll asks with the ETags and stops at the 304s.
  from = world.proxy.answered.length
  const quiet = await runs.run(new Set(), context(true))
  // With no watcher to trust, the poll states every file (nothing moved) before asking.
  expect(quiet).toEqual({
    kind: 'done',
    retryPaths: [],
    whole: false,
    look: { files: 'stat', moved: 0, listings: 'unchanged', planned: 'nothing' },
  })
  expect(listings(from).map((a) => a.slice(-3))).toEqual(['304', '304'])
  // A file changed without an event: the poll plans that path alone (one read by id), not
  // every item.
  await world.editJson('content/home.json', { properties: { title: 'edited' } })
  from = world.proxy.answered.length
  const edit = await runs.run(new Set(), context(true))
  expect(edit).toMatchObject({
    kind: 'done',
    whole: false,
    outcome: { applied: [{ path: 'content/home.json', action: 'push' }] },
  })
  expect(contentRequests(world, from)).toEqual([
    'GET /api/demo/live/content 304',
    'GET /api/demo/live/content/home 200',
  ])
  // That push changed the server's listing: the next poll plans everything and finds nothing.
  from = world.proxy.answered.length
  expect(await runs.run(new Set(), context(true))).toMatchObject({
    kind: 'done',
    whole: true,
    outcome: { applied: [] },
  })
  expect(listings(from).map((a) => a.slice(-3))).toContain('200')
  // A remote edit changes the listing: planned whole, pulled.
  await world.setContent('news', { properties: { title: 'remote' } })
  expect(await runs.run(new Set(), context(true))).toMatchObject({
    kind: 'done',
    whole: true,
    outcome: { applied: [{ path: 'content/news.json', action: 'pull' }] },
  })
  // Its own write moved news.json's stat: one edit-only look at it, then quiet again.
  expect(await runs.run(new Set(), context(true))).toMatchObject({
    kind: 'done',
    whole: false,
    outcome: { applied: [] },
  })
  expect(await runs.run(new Set(), context(true))).toMatchObject({
    kind: 'done',
    whole: false,
    look: { planned: 'nothing' },
  })
})

test('an edit the watcher never reported is pushed by the next poll, not the next deep rescan', async () => {
  world = await syncedWorld('spec')
  const runs = await engineFor(world)
  await runs.run(new Set(), context(true))
  // The OS watch lost these events: nobody tells the runs.
  await world.editJson('content/home.json', { properties: { title: 'edited while unwatched' } })
  await writeFile(
    world.file('content/brand-new.json'),
    `${JSON.stringify(contentFile('brand-new', { properties: { title: 'new' } }), null, 2)}\n`,
  )
  const result = await runs.run(new Set(), context(true))
  expect(result).toMatchObject({ kind: 'done' })
  expect(await world.server.get('content', 'home')).toMatchObject({
    properties: { title: 'edited while unwatched' },
  })
  expect(await world.server.get('content', 'brand-new')).toMatchObject({ properties: { title: 'new' } })
})

test('a look taken ahead of the poll is what the poll plans from; a change after it waits for the next look', async () => {
  world = await syncedWorld('spec')
  const runs = await engineFor(world)
  await runs.run(new Set(), context(true))
  await world.editJson('content/home.json', { properties: { title: 'seen by the look' } })
  await runs.lookAhead()
  await world.editJson('content/news.json', { properties: { title: 'after the look' } })
  expect(await runs.run(new Set(), context(true))).toMatchObject({
    kind: 'done',
    whole: false,
    outcome: { applied: [{ path: 'content/home.json', action: 'push' }] },
  })
  expect(await world.server.get('content', 'news')).toMatchObject({ properties: { title: 'news' } })
  // The next look finds it (the push changed the listing, so that poll plans everything).
  await runs.run(new Set(), context(true))
  expect(await world.server.get('content', 'news')).toMatchObject({ properties: { title: 'after the look' } })
})

test('an idle daemon holds no record of the state in memory: a quiet poll lets go of what the runs read, unless someone is editing, and never of an unsaved change', async () => {
  world = await syncedWorld('spec')
  let clock = 0
  const { engine, runs } = await engineAndRuns(world, false, undefined, {
    editingMs: 60_000,
    now: () => clock,
  })
  await runs.run(new Set(), context(true)) // the start-up reconcile reads every base
  expect(engine.recordsInMemory()).toBeGreaterThan(0)
  clock = 10_000
  expect(await runs.run(new Set(), context(true))).toMatchObject({ look: { planned: 'nothing' } })
  expect(engine.recordsInMemory()).toBe(0)
  // The media verifier's tick reads no record either.
  expect(engine.mediaToVerify()).toEqual([])
  expect(engine.recordsInMemory()).toBe(0)

  // An edit (a watcher's batch) leaves its record unsaved (the save timer saves it): kept.
  await world.editJson('content/home.json', { properties: { title: 'edited' } })
  clock = 20_000
  expect(await runs.run(new Set(['content/home.json']), context())).toMatchObject({
    outcome: { applied: [{ path: 'content/home.json', action: 'push' }] },
  })
  engine.dropSavedRecords()
  expect(engine.recordsInMemory()).toBeGreaterThan(0)
  // Its push changed the listing: the next poll plans everything (and saves).
  clock = 30_000
  expect(await runs.run(new Set(), context(true))).toMatchObject({ whole: true })
  // Within a minute of the edit, an editing session: the next full poll would read them all again.
  clock = 79_999
  expect(await runs.run(new Set(), context(true))).toMatchObject({ look: { planned: 'nothing' } })
  expect(engine.recordsInMemory()).toBeGreaterThan(0)
  clock = 80_000
  expect(await runs.run(new Set(), context(true))).toMatchObject({ look: { planned: 'nothing' } })
  expect(engine.recordsInMemory()).toBe(0)
  // Read again from disk when asked: the push is a base, nothing is left to do.
  expect(await runs.run(new Set(['content/home.json']), context())).toMatchObject({
    outcome: { applied: [] },
  })
  const status = await world.cli('--json', 'status')
  expect(status.json.changes).toEqual([])
})
