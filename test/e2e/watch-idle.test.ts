// An idle `watch` costs what a bare poller costs: a quiet poll is the conditional listings and
// nothing else (no file is stated), local edits come from the watcher's events, and the stat of
// every file comes back only when the events may be incomplete (the watcher could not start: the
// system's watch limit) or for the deep rescan, which reads every file.

import { readFile, stat, utimes, writeFile } from 'node:fs/promises'
import { afterEach, expect, test, vi } from 'vitest'
import { syncedWorld, type World } from '../helpers/sync-world.js'
import { type Event, serverTitle, setWatchConfig, watchInProcess } from '../helpers/watch.js'
import { waitFor } from '../watch/helpers.js'

// The system's file watch limit, as the OS answers it: the watcher cannot start.
const limit = vi.hoisted(() => ({ reached: false }))
vi.mock('@parcel/watcher', async (importOriginal) => {
  const real = (await importOriginal()) as { default: typeof import('@parcel/watcher') }
  return {
    default: {
      ...real.default,
      subscribe: (...args: Parameters<typeof real.default.subscribe>) =>
        limit.reached
          ? Promise.reject(
              Object.assign(new Error('inotify_add_watch failed: No space left on device'), {
                code: 'ENOSPC',
              }),
            )
          : real.default.subscribe(...args),
    },
  }
})

let world: World | undefined
let watching: ReturnType<typeof watchInProcess> | undefined
afterEach(async () => {
  await watching?.stop()
  await world?.close()
  watching = undefined
  world = undefined
  limit.reached = false
})

async function watched(args: string[] = []) {
  world = await syncedWorld('spec')
  await setWatchConfig(world.root, { debounceMs: 50, pollSeconds: 1 })
  watching = watchInProcess(world.root, world.env, args)
  await watching.waitForEvent({ event: 'reconciled' })
  return { w: world, d: watching }
}

const polls = (events: Event[]) => events.filter((e) => e.event === 'polled')

/** Waits until `count` polls have been told; returns the last. */
async function pollNumber(d: { events: Event[] }, count: number): Promise<Event> {
  await waitFor(() => polls(d.events).length >= count, { timeoutMs: 10_000, what: `poll ${count}` })
  return polls(d.events)[count - 1]!
}

test('a quiet poll asks only the conditional listings and states no file; an edit still comes through the watcher', async () => {
  const { w, d } = await watched()
  // Every request of one whole poll: those answered between the end of one poll and the next.
  const before = polls(d.events).length
  await pollNumber(d, before + 1)
  const from = w.proxy.answered.length
  const quiet = await pollNumber(d, before + 2)
  const requests = w.proxy.answered.slice(from)
  expect(quiet).toMatchObject({ files: 'events', moved: 0, listings: 'unchanged', planned: 'nothing' })
  expect(requests.length).toBeGreaterThan(0)
  expect(requests.filter((r) => !/^GET \/api\/demo\/live\/[a-z]+ 304$/.test(r))).toEqual([])

  await w.editJson('content/home.json', { properties: { title: 'edited while watched' } })
  await d.waitForEvent({ event: 'pushed', path: 'content/home.json' })
  expect(await serverTitle(w.server, 'home')).toBe('edited while watched')
  // The push changed the content listing: one poll reconciles the remote side, then quiet again.
  const pushedAt = polls(d.events).length
  const after = await pollNumber(d, pushedAt + 2)
  expect(after).toMatchObject({ files: 'events', planned: 'nothing' })
  expect(d.events.filter((e) => e.event === 'failed' || e.event === 'conflict')).toEqual([])
})

test('with the watch limit reached, every poll states every file and finds an edit the watcher could not see', async () => {
  limit.reached = true
  const { w, d } = await watched()
  const warning = await d.waitForEvent({ event: 'warning' })
  expect(warning.message).toMatch(/file watch limit is reached.*found by the poll every 1 s/)
  const before = polls(d.events).length
  expect(await pollNumber(d, before + 1)).toMatchObject({ files: 'stat', planned: 'nothing' })

  await w.editJson('content/home.json', { properties: { title: 'edited while unwatched' } })
  await waitFor(() => polls(d.events).some((p) => p.planned === 'paths'), {
    timeoutMs: 10_000,
    what: 'a poll that found the edit',
  })
  await d.waitForEvent({ event: 'pushed', path: 'content/home.json' })
  expect(await serverTitle(w.server, 'home')).toBe('edited while unwatched')
})

test('the deep rescan reads every file: an edit that kept size and mtime is pushed', async () => {
  // The watch limit leaves the edit to the polls, whose stat look cannot see it.
  limit.reached = true
  world = await syncedWorld('spec')
  // A whole second, so that setting it again gives back the very same stat.
  const file = world.file('content/home.json')
  const then = Math.floor(Date.now() / 1000) - 60
  await utimes(file, then, then)
  await setWatchConfig(world.root, { debounceMs: 50, pollSeconds: 1 })
  watching = watchInProcess(world.root, world.env, ['--rescan-seconds', '3'])
  const [w, d] = [world, watching]
  await d.waitForEvent({ event: 'reconciled' })
  const text = await readFile(file, 'utf8')
  const edited = text.replace('"title": "home"', '"title": "HOME"')
  expect(edited.length).toBe(text.length)
  await writeFile(file, edited)
  await utimes(file, then, then)
  await d.waitForEvent({ event: 'pushed', path: 'content/home.json' }, 15_000)
  expect(await serverTitle(w.server, 'home')).toBe('HOME')
  // It was the rescan that found it: the poll that pushed it read every file.
  const pushed = d.events.findIndex((e) => e.event === 'pushed' && e.path === 'content/home.json')
  const poll = d.events.slice(pushed).find((e) => e.event === 'polled')
  expect(poll).toMatchObject({ files: 'read' })
})

test('a server whose listings answer 304 to everything cannot hide a remote change past the deep rescan', async () => {
  const { w, d } = await watched(['--rescan-seconds', '3'])
  // A cache in front of the server that answers every conditional listing "not modified".
  w.proxy.override = (method, route, headers) => {
    const etag = headers['if-none-match']
    if (method !== 'GET' || typeof etag !== 'string' || !/^\/api\/demo\/live\/[a-z]+$/.test(route)) return
    return { status: 304, body: '', headers: { etag } }
  }
  await w.setContent('news', { properties: { title: 'behind the cache' } })
  const polled = polls(d.events).length
  await d.waitForEvent({ event: 'pulled', path: 'content/news.json' }, 15_000)
  expect(await w.readJson('content/news.json')).toMatchObject({ properties: { title: 'behind the cache' } })
  // The quiet polls believed the cache; the deep rescan asked without the ETags.
  const pulled = d.events.findIndex((e) => e.event === 'pulled' && e.path === 'content/news.json')
  expect(d.events.slice(pulled).find((e) => e.event === 'polled')).toMatchObject({ files: 'read' })
  expect(polls(d.events).slice(polled, -1)).not.toContainEqual(
    expect.objectContaining({ listings: 'changed' }),
  )
})

test('a remote change a quiet poll finds costs one download of that listing: the check hands its answer to the full run', async () => {
  const { w, d } = await watched()
  await pollNumber(d, polls(d.events).length + 1)
  const from = w.proxy.answered.length
  const polled = polls(d.events).length
  await w.setContent('news', { properties: { title: 'changed on the server' } })
  await d.waitForEvent({ event: 'pulled', path: 'content/news.json' })
  expect(await w.readJson('content/news.json')).toMatchObject({
    properties: { title: 'changed on the server' },
  })
  expect(polls(d.events).slice(polled)).toContainEqual(
    expect.objectContaining({ listings: 'changed', planned: 'everything' }),
  )
  // The poll's check asked content with its ETag and got the new listing: the full run that
  // followed read that answer, not the listing again.
  const content = w.proxy.answered.slice(from).filter((r) => /^GET \/api\/demo\/live\/content /.test(r))
  expect(content.filter((r) => r.endsWith(' 200'))).toEqual(['GET /api/demo/live/content 200'])
})

test('a quiet daemon does not touch its workspace lock on every poll', async () => {
  const { w, d } = await watched()
  const lock = w.file('.cms-sync/lock')
  const before = (await stat(lock)).mtimeMs
  // Seven quiet polls a second apart: longer than any heartbeat that beats on the poll's scale.
  const quiet = polls(d.events).length
  await pollNumber(d, quiet + 7)
  expect((await stat(lock)).mtimeMs).toBe(before)
})
