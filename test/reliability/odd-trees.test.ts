// Odd trees (docs/reliability.md "Everyday team workflow and odd trees"): a kind folder replaced
// by a plain file, for every command and under watch; a watched workspace moved away or deleted;
// a request body nested 100,000 levels deep at the emulator. In-process against the emulator,
// both dialects; oracles: no internal error, the server's items unchanged but for what the test
// changed, nothing written outside the workspace (or at its old path).

import { existsSync } from 'node:fs'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { createMediaApi } from '../../src/remote/media.js'
import { contentOf, startWorld, type World } from '../helpers/sync-world.js'
import { serverTitle, setWatchConfig, watchInProcess } from '../helpers/watch.js'
import { report, sentinelAround } from './support.js'

const COMMANDS = ['status', 'pull', 'push', 'sync'] as const

describe.each(['spec', 'upstream'] as const)('odd trees (%s dialect)', (dialect) => {
  let world: World | undefined
  const stops: Array<() => Promise<unknown>> = []
  const figures = { commandsRun: 0, internalErrors: 0, serverChanged: 0, watchStops: 0 }
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop()
    await world?.close()
    world = undefined
  })

  async function synced(): Promise<World> {
    world = await startWorld(dialect, { resources: ['schemas', 'content', 'media'] })
    const first = await world.cli('sync')
    if (first.exitCode !== 0) throw new Error(first.stderr)
    return world
  }

  test('a kind folder replaced by a plain file: "not a folder, not synced", exit 1, the rest still syncs', async () => {
    const w = await synced()
    const outside = await sentinelAround(w.root)
    const aroundBefore = await outside()
    await rm(w.file('schemas'), { recursive: true })
    await writeFile(w.file('schemas'), 'a note where the folder was\n')
    await writeFile(w.file('media'), 'media is a file too\n')
    const server = await w.serverState()
    for (const command of COMMANDS) {
      const run = await w.cli(command)
      figures.commandsRun++
      if (/internal error/i.test(run.stderr)) figures.internalErrors++
      expect(run.stderr, command).not.toMatch(/internal error/i)
      expect(run.exitCode, `${command}: ${run.stderr}`).toBe(1)
      expect(run.stdout + run.stderr, command).toMatch(/schemas\b[^\n]*\n?[^\n]*not a folder, not synced/)
      expect(run.stdout + run.stderr, command).toMatch(/media\b[^\n]*\n?[^\n]*not a folder, not synced/)
      if (JSON.stringify(await w.serverState()) !== JSON.stringify(server)) figures.serverChanged++
      expect(await w.serverState(), command).toEqual(server)
    }
    expect(await readFile(w.file('schemas'), 'utf8')).toBe('a note where the folder was\n')
    // The content beside it still syncs both ways
    await w.setContent('news', { properties: { title: 'from the editor' } })
    await w.editJson('content/home.json', { properties: { title: 'from the developer' } })
    const sync = await w.cli('--json', 'sync')
    expect(sync.exitCode).toBe(1)
    expect(sync.json.applied.map((i: { path: string }) => i.path).sort()).toEqual([
      'content/home.json',
      'content/news.json',
    ])
    expect(await serverTitle(w.server, 'home')).toBe('from the developer')
    expect(((await w.readJson('content/news.json')).properties as { title: string }).title).toBe(
      'from the editor',
    )
    expect((await w.server.list('schema')).map((s) => s.id)).toEqual(['section'])
    expect(await outside()).toEqual(aroundBefore)
  })

  test('watch: a kind folder replaced by a file is told, nothing is deleted, and watch keeps syncing', async () => {
    const w = await synced()
    await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
    // media/ is a file before watch starts; schemas/ becomes one while it runs
    await rm(w.file('media'), { recursive: true, force: true })
    await writeFile(w.file('media'), 'not a folder\n')
    const d = watchInProcess(w.root, w.env)
    stops.push(() => d.stop())
    await d.waitForEvent({ event: 'reconciled' }, 20_000)
    expect(d.events).toContainEqual(
      expect.objectContaining({
        event: 'failed',
        path: 'media',
        error: expect.stringMatching(/^not a folder, not synced/),
      }),
    )
    await rm(w.file('schemas'), { recursive: true })
    await writeFile(w.file('schemas'), 'not a folder\n')
    await d.waitForEvent({ event: 'failed', path: 'schemas' }, 20_000)
    // Still up: an edit beside it is pushed
    await w.editJson('content/home.json', { properties: { title: 'pushed by watch' } })
    await d.waitForEvent({ event: 'pushed', path: 'content/home.json' }, 20_000)
    expect(await serverTitle(w.server, 'home')).toBe('pushed by watch')
    expect((await w.server.list('schema')).map((s) => s.id)).toEqual(['section'])
    expect(d.stderr()).not.toMatch(/internal error/i)
    expect(await d.stop()).toBe(0)
    figures.watchStops++
  })

  for (const how of ['moved away', 'deleted'] as const) {
    test(`watch: the workspace ${how} stops watch with a message, nothing written at the old path`, async () => {
      const w = await synced()
      const outside = await sentinelAround(w.root)
      const aroundBefore = await outside()
      await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
      const d = watchInProcess(w.root, w.env)
      stops.push(() => d.stop())
      await d.waitForEvent({ event: 'reconciled' }, 20_000)
      const moved = path.join(path.dirname(w.root), 'moved-site')
      if (how === 'moved away') await rename(w.root, moved)
      else await rm(w.root, { recursive: true, force: true })
      // An editor's change meanwhile must not be written anywhere
      await w.setContent('news', { properties: { title: 'while it was gone' } })
      const exit = await d.exit
      figures.watchStops++
      expect(exit).toBe(1)
      expect(d.stderr() + JSON.stringify(d.events)).toMatch(
        /the workspace .* (moved away or deleted|is gone)/,
      )
      expect(d.stderr()).not.toMatch(/internal error/i)
      expect(existsSync(w.root), 'nothing written at the old path').toBe(false)
      const after = new Map([...(await outside())].filter(([rel]) => !rel.startsWith('moved-site/')))
      expect(after).toEqual(aroundBefore)
      if (how === 'moved away')
        expect(
          JSON.parse(await readFile(path.join(moved, 'content/news.json'), 'utf8')).properties.title,
        ).toBe('news')
    })
  }

  test('report', () => {
    report(`odd-trees/${dialect}`, figures)
  })
})

describe.each(['spec', 'upstream'] as const)(
  'a server whose listing ETag never changes (%s dialect)',
  (dialect) => {
    let world: World | undefined
    afterEach(async () => {
      await world?.close()
      world = undefined
    })

    test("pull keeps the user's just-pushed item and sync brings nothing back wrong", async () => {
      const w = await startWorld(dialect, {
        content: ['home', 'news', 'shop'],
        resources: ['schemas', 'content', 'media'],
      })
      world = w
      // A proxy (or CDN) in front of the server: one ETag for every listing, 304 whenever it is sent back
      const FIXED = 'W/"always-the-same"'
      const listings = /^\/api\/demo\/live\/(content|schemas?|media)$/
      let answered304 = 0
      w.proxy.override = async (method, route, headers) => {
        if (method !== 'GET' || !listings.test(route)) return undefined
        if (headers['if-none-match'] === FIXED) {
          answered304++
          return { status: 304, body: '', headers: { etag: FIXED } }
        }
        const res = await fetch(`${w.emulator.url}${route}`, {
          headers: { authorization: `Bearer ${w.emulator.token()}` },
        })
        return { status: res.status, body: await res.text(), headers: { etag: FIXED } }
      }
      expect((await w.cli('sync')).exitCode).toBe(0)
      expect((await w.cli('--json', 'status')).json).toMatchObject({ clean: true })
      const stateFile = w.file('.cms-sync/state/index.json')
      const validatorsBefore = JSON.parse(await readFile(stateFile, 'utf8')).validators
      expect(Object.keys(validatorsBefore ?? {})).toContain('content')
      // The user adds an item and pushes it
      const { createDate: _c, ...fresh } = contentOf('fresh')
      await w.writeJson('content/fresh.json', fresh)
      await mkdir(w.file('media/img'), { recursive: true })
      await writeFile(w.file('media/img/fresh.png'), 'fresh bytes')
      const push = await w.cli('--json', 'push')
      expect(push.exitCode, push.stderr).toBe(0)
      expect(await w.server.get('content', 'fresh')).toBeDefined()
      expect((await createMediaApi(w.server).list()).map((m) => m.name)).toContain('fresh.png')
      const server = await w.serverState()
      for (const command of ['pull', 'sync', 'status', 'pull']) {
        const run = await w.cli('--json', command)
        expect(run.exitCode, `${command}: ${run.stderr}`).toBe(0)
        expect(await w.exists('content/fresh.json'), `${command} keeps content/fresh.json`).toBe(true)
        expect(await w.exists('media/img/fresh.png'), `${command} keeps media/img/fresh.png`).toBe(true)
        expect(await w.serverState(), command).toEqual(server)
      }
      expect((await w.cli('--json', 'status')).json).toMatchObject({ clean: true, changes: [] })
      // The validators are still used where they are right: a quiet run is answered 304
      expect(answered304).toBeGreaterThan(0)
      // Validators older than the state (copied back by hand) name a listing without the item:
      // the 304 stands for the bases, which hold it, so it is kept
      const state = JSON.parse(await readFile(stateFile, 'utf8'))
      await writeFile(stateFile, JSON.stringify({ ...state, validators: validatorsBefore }))
      const stale = await w.cli('--json', 'pull')
      expect(stale.exitCode, stale.stderr).toBe(0)
      expect(stale.json.applied).toEqual([])
      expect(await w.exists('content/fresh.json')).toBe(true)
      expect(await w.serverState()).toEqual(server)
      // A delete of the user's own is carried out and not undone by the stale listing
      await w.remove('content/shop.json')
      expect((await w.cli('push')).exitCode).toBe(0)
      expect(await w.server.get('content', 'shop')).toBeUndefined()
      const after = await w.cli('--json', 'sync')
      expect(after.exitCode).toBe(0)
      expect(after.json.applied).toEqual([])
      expect(await w.exists('content/shop.json')).toBe(false)
    })
  },
)

describe('the emulator and a body nested 100,000 levels deep', () => {
  test.each(['spec', 'upstream'] as const)('%s: answers 400 and keeps serving', async (dialect) => {
    const w = await startWorld(dialect, { content: ['home'] })
    try {
      const nested = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`
      const body = `{"id":"deep","parentId":"","schemaId":"section","properties":${nested}}`
      const res = await fetch(`${w.emulator.url}/api/demo/live/content/deep?create=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${w.emulator.token()}` },
        body,
      })
      expect(res.status).toBe(400)
      expect(await res.text()).toMatch(/deep|nest/i)
      expect(await w.server.get('content', 'home')).toMatchObject(
        contentOf('home', { createDate: expect.anything() }),
      )
    } finally {
      await w.close()
    }
  })
})
