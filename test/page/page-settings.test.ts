// Where the page is served and whether: the ui settings in cms-sync.yaml (validated like every
// key), `watch --ui-port` and `--no-ui`; and the held model the page reads, as status lists it.

import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { createServer } from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { heldOf } from '../../src/page/held.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'
import { setWatchConfig, watchInProcess } from '../helpers/watch.js'
import { uiInProcess } from './ui-process.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

async function world(): Promise<World> {
  const w = await syncedWorld('spec')
  cleanups.push(() => w.close())
  await setWatchConfig(w.root)
  return w
}

async function addConfig(w: World, line: string): Promise<void> {
  const file = path.join(w.root, 'cms-sync.yaml')
  await writeFile(file, `${await readFile(file, 'utf8')}${line}\n`)
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function startWatch(w: World, args: string[] = []) {
  const daemon = watchInProcess(w.root, w.env, args)
  cleanups.push(() => daemon.stop())
  await daemon.waitForEvent({ event: 'ready' }, 15_000)
  return daemon
}

describe('where the page is served', () => {
  test('a wrong ui setting is refused with its key and what was expected, and nothing runs', async () => {
    const w = await world()
    await addConfig(w, 'ui: { port: "eighty" }')
    const run = await w.cli('status')
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain('ui.port')
    expect(run.stderr).toContain('a whole port number from 0 to 65535')
  })

  test('watch serves the page on a free loopback port by default, and prints its address once', async () => {
    const w = await world()
    const daemon = await startWatch(w)
    const pages = daemon.events.filter((e) => e.event === 'page')
    expect(pages).toHaveLength(1)
    expect(pages[0]!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/s\/[\w-]{43}\/$/)
    expect((await fetch(pages[0]!.url)).status).toBe(200)
    // The address is this run's key: it is not in the log
    const logs = path.join(w.root, '.cms-sync', 'logs')
    const { readdir } = await import('node:fs/promises')
    for (const file of await readdir(logs))
      expect(await readFile(path.join(logs, file), 'utf8')).not.toContain(new URL(pages[0]!.url).pathname)
  })

  test('the port comes from ui.port, and --ui-port overrides it', async () => {
    const w = await world()
    const configured = await freePort()
    await addConfig(w, `ui: { port: ${configured} }`)
    let daemon = await startWatch(w)
    expect(new URL((await daemon.waitForEvent({ event: 'page' })).url).port).toBe(String(configured))
    await daemon.stop()
    const flagged = await freePort()
    daemon = await startWatch(w, ['--ui-port', String(flagged)])
    expect(new URL((await daemon.waitForEvent({ event: 'page' })).url).port).toBe(String(flagged))
  })

  test('--no-ui, or ui.enabled: false, serves no page', async () => {
    const w = await world()
    let daemon = await startWatch(w, ['--no-ui'])
    expect(daemon.events.some((e) => e.event === 'page')).toBe(false)
    await daemon.stop()
    await addConfig(w, 'ui: { enabled: false }')
    daemon = await startWatch(w)
    expect(daemon.events.some((e) => e.event === 'page')).toBe(false)
  })
})

/** A POST from the page itself: its own Origin, a JSON body. */
// biome-ignore lint/suspicious/noExplicitAny: test convenience for parsed JSON answers
function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: u.origin },
      },
      (res) => {
        let text = ''
        res.on('data', (c) => {
          text += String(c)
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }))
      },
    )
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}

describe('held changes under `cms-sync ui`', () => {
  test('the held deletions of a paused watcher are pushed as `push --allow-deletes` would, and the pause is lifted', async () => {
    const w = await world()
    // Given deletions a watcher paused on (it has stopped since; the pause stays)
    await rm(w.file('content/news.json'))
    await rm(w.file('content/shop.json'))
    await mkdir(path.join(w.root, '.cms-sync'), { recursive: true })
    const pause = { since: new Date().toISOString(), reason: 'mass-delete', count: 2, samplePaths: [] }
    await writeFile(path.join(w.root, '.cms-sync', 'watch-paused.json'), JSON.stringify(pause))
    const url = await uiInProcess(w, (stop) => cleanups.push(stop))
    // biome-ignore lint/suspicious/noExplicitAny: test convenience for the page's JSON state
    const state = async (): Promise<any> => (await fetch(`${url}state`)).json()
    // The page's state lists them once a page is open (its first read)
    const events = await fetch(`${url}events`)
    const reader = events.body!.getReader()
    cleanups.push(() => reader.cancel())
    const decoder = new TextDecoder()
    let text = ''
    while (!text.includes('content/shop.json')) text += decoder.decode((await reader.read()).value)
    expect((await state()).held[0].items.map((i: { path: string }) => i.path)).toEqual([
      'content/news.json',
      'content/shop.json',
    ])
    // When they are pushed from the page
    const released = await post(`${url}api/release`, { paths: ['content/news.json', 'content/shop.json'] })
    expect(released.status).toBe(200)
    expect(released.json.outcome.applied.map((i: { action: string }) => i.action)).toEqual([
      'delete-remote',
      'delete-remote',
    ])
    // Then the server lost them, the pause is lifted, and nothing else changed
    expect(await w.server.get('content', 'news')).toBeUndefined()
    expect(await w.server.get('content', 'shop')).toBeUndefined()
    expect(await w.server.get('content', 'home')).toBeDefined()
    expect(await w.exists('.cms-sync/watch-paused.json')).toBe(false)
    // A path that is not a workspace path is refused, and nothing runs
    const outside = await post(`${url}api/release`, { paths: ['../elsewhere.json'] })
    expect(outside.status).toBe(400)
  })
})

describe('what the page lists as held', () => {
  const status = {
    changes: [
      {
        kind: 'content',
        id: 'a',
        path: 'content/a.json',
        local: 'deleted',
        remote: 'unchanged',
        action: 'delete-remote',
      },
      {
        kind: 'content',
        id: 'b',
        path: 'content/b.json',
        local: 'modified',
        remote: 'unchanged',
        action: 'push',
      },
    ],
    problems: [],
    tokenRefused: undefined,
    document: {},
  }

  test('the held list of the status model: each held change with its own commands and the buttons that do the same', () => {
    const held = heldOf({
      ...status,
      watchPaused: undefined,
      held: [
        {
          guard: 'max-delete',
          side: 'remote',
          kind: 'content',
          action: 'delete-local',
          paths: ['content/a.json'],
          count: 1,
          reason: '1 content item deleted on the server',
          release: 'cms-sync resolve --keep remote content/a.json',
          drop: 'cms-sync resolve --keep local content/a.json',
        },
        {
          guard: 'orphans',
          side: 'local',
          kind: 'content',
          action: 'delete-remote',
          paths: ['content/c.json'],
          count: 1,
          reason: '1 content item deleted in the workspace that still has children',
          release: 'delete the children too, or move them under another parent, in the same push',
          drop: 'cms-sync restore content/c.json',
        },
        {
          guard: 'mass-change',
          side: 'local',
          action: 'push',
          paths: ['content/b.json'],
          count: 1,
          reason: 'watch paused pushing',
          release: 'run `cms-sync push`',
          drop: 'cms-sync restore content/b.json',
          since: '2026-11-27T10:00:00.000Z',
        },
      ],
    })
    expect(held).toEqual([
      {
        reason: '1 content item deleted on the server',
        items: [{ path: 'content/a.json', kind: 'content', action: 'delete-remote' }],
        release: 'cms-sync resolve --keep remote content/a.json',
        drop: 'cms-sync resolve --keep local content/a.json',
        releaseAct: { op: 'resolve', keep: 'remote' },
        dropAct: { op: 'resolve', keep: 'local' },
      },
      {
        reason: '1 content item deleted in the workspace that still has children',
        items: [{ path: 'content/c.json', kind: 'content', action: 'delete-remote' }],
        release: 'delete the children too, or move them under another parent, in the same push',
        drop: 'cms-sync restore content/c.json',
        dropAct: { op: 'restore' },
      },
      {
        reason: 'watch paused pushing',
        since: '2026-11-27T10:00:00.000Z',
        items: [{ path: 'content/b.json', kind: 'content', action: 'push' }],
        release: 'run `cms-sync push`',
        drop: 'cms-sync restore content/b.json',
        releaseAct: { op: 'release' },
        dropAct: { op: 'restore' },
      },
    ])
    expect(heldOf({ ...status, watchPaused: undefined, held: [] })).toEqual([])
  })
})
