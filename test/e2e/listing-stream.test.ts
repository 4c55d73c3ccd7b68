// Memory follows the change (remote-snapshot.ts): a listing read in full is compared item by item
// as its body arrives, and an item the server left as its base is kept only as that base, the
// stand-in a 304 gives; only changed and new items are kept whole. What must hold besides: the
// plan is the one a whole read gives (the server's edits pulled, its deletions found), the listing
// is downloaded once, and a run with a local change plans on the listing's true items (a
// field-level merge, a push) as before.

import { readFile, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { applyRun, type EngineDeps, planRun, SELECT } from '../../src/engine/plan-and-apply.js'
import type { RemoteEntry } from '../../src/engine/remote-snapshot.js'
import { createRemoteClient, type RemoteClient } from '../../src/remote/index.js'
import { CODECS } from '../../src/workspace/codecs.js'
import { RUN_OPTIONS, TARGET } from '../helpers/engine-world.js'
import { contentOf } from '../helpers/fixtures.js'
import { silentLogger } from '../helpers/memory-remote.js'
import { startWorld, type World } from '../helpers/sync-world.js'

const CONTENT_LISTING = /^GET \/api\/demo\/live\/content (\d+)$/
const PAGES = Array.from({ length: 20 }, (_, i) => `page-${i}`)

describe.each(['spec', 'upstream'] as const)('a listing read in full (%s dialect)', (dialect) => {
  let world: World
  let client: RemoteClient | undefined
  afterEach(async () => {
    await client?.close()
    client = undefined
    await world?.close()
  })

  /** A workspace synced with 20 pages, whose content validator is gone (as after the tool's own push). */
  async function syncedWithoutValidator(): Promise<World> {
    world = await startWorld(dialect, { content: PAGES })
    const sync = await world.cli('sync')
    expect(sync.exitCode, sync.stderr).toBe(0)
    const file = world.file('.cms-sync/state/index.json')
    const index = JSON.parse(await readFile(file, 'utf8'))
    delete index.validators
    await writeFile(file, JSON.stringify(index))
    return world
  }

  /** The engine over the world's workspace and a real client of its server (through the proxy). */
  async function engine(w: World): Promise<EngineDeps> {
    client = await createRemoteClient({
      server: w.proxy.url,
      project: 'demo',
      environment: 'live',
      token: w.emulator.token(),
      dialect,
      rateLimit: { requestsPerSecond: 1000, concurrency: 4 },
    })
    return {
      root: w.root,
      target: { ...TARGET, server: w.proxy.url },
      client,
      logger: silentLogger,
      codecs: CODECS,
      maxDeletePercent: 50,
    }
  }

  const contentListings = (w: World, from: number) =>
    w.proxy.answered.slice(from).flatMap((line) => CONTENT_LISTING.exec(line)?.[1] ?? [])

  /** Whether the run holds the entry's server object: a base standing for it has none to give. */
  const hasServerObject = (entry: RemoteEntry) => {
    try {
      return typeof entry.object === 'object'
    } catch {
      return false
    }
  }

  const contentEntries = (remote: ReadonlyMap<string, RemoteEntry>) =>
    [...remote.values()].filter((entry) => entry.kind === 'content')

  test('the unchanged items are kept as their bases, the changed and new ones whole; the plan is the same, from one download', async () => {
    const w = await syncedWithoutValidator()
    await w.setContent('page-3', { properties: { title: 'edited on the server' } })
    await w.server.put('content', 'page-new', contentOf('page-new'))
    await w.server.remove('content', 'page-5')
    const deps = await engine(w)
    const from = w.proxy.answered.length
    const run = await planRun(deps, {})
    const content = contentEntries(run.remote)
    expect(content.filter(hasServerObject).map((entry) => entry.id)).toEqual(['page-3', 'page-new'])
    expect(content.filter((entry) => !hasServerObject(entry))).toHaveLength(PAGES.length - 2)
    expect(contentListings(w, from)).toEqual(['200'])
    const changes = run.plan.items
      .filter((item) => item.action !== 'none')
      .map((item) => `${item.action} ${item.path}`)
      .sort()
    expect(changes).toEqual([
      'delete-local content/page-5.json',
      'pull content/page-3.json',
      'pull content/page-new.json',
    ])
    const outcome = await applyRun(deps, run, { ...RUN_OPTIONS, select: SELECT.pull })
    expect(outcome.failed, JSON.stringify(outcome.failed)).toEqual([])
    expect((await w.readJson('content/page-3.json')).properties).toEqual({ title: 'edited on the server' })
    expect(await w.exists('content/page-new.json')).toBe(true)
    expect(await w.exists('content/page-5.json')).toBe(false)
    const status = await w.cli('--json', 'status')
    expect(status.json, status.stderr).toMatchObject({ clean: true })
  })

  test('a run with a local change reads the listing again whole, and merges and pushes as before', async () => {
    const w = await syncedWithoutValidator()
    // Both sides changed page-1, in different fields: a field-level merge needs the server's object.
    await w.setContent('page-1', { sort: 7 })
    await w.editJson('content/page-1.json', { properties: { title: 'edited here' } })
    // Only the workspace changed page-2: the push writes over the server's unchanged copy.
    await w.editJson('content/page-2.json', { properties: { title: 'pushed' } })
    const deps = await engine(w)
    const from = w.proxy.answered.length
    const run = await planRun(deps, {})
    expect(contentEntries(run.remote).every(hasServerObject)).toBe(true)
    expect(contentListings(w, from)).toEqual(['200', '200'])
    const changes = run.plan.items
      .filter((item) => item.action !== 'none')
      .map((item) => `${item.action} ${item.path}`)
      .sort()
    expect(changes).toEqual(['merge content/page-1.json', 'push content/page-2.json'])
    const outcome = await applyRun(deps, run, { ...RUN_OPTIONS, select: SELECT.sync })
    expect(outcome.failed, JSON.stringify(outcome.failed)).toEqual([])
    expect(await w.server.get('content', 'page-1')).toMatchObject({
      sort: 7,
      properties: { title: 'edited here' },
    })
    expect((await w.server.get('content', 'page-2'))?.properties).toEqual({ title: 'pushed' })
  })
})
