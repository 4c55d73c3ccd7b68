// A kind's listing (src/remote/listings.ts) in both dialects against the emulator over real
// HTTP: kept with its ETag so an unchanged listing costs one 304, dropped by the tool's own
// writes, never kept on disk for kinds that carry secrets or submissions, and refused whole (a
// safety stop) when the server fails it: never read as empty.

import { mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import { ExitCode } from '../../src/errors/exit-codes.js'
import { createRemoteClient, type RemoteClient } from '../../src/remote/index.js'
import { workspaceListingCache } from '../../src/remote/listing-cache.js'
import { type CountingProxy, startCountingProxy } from '../helpers/counting-proxy.js'

const page = (id: string, title: string) => ({
  id,
  parentId: '',
  schemaId: 'page',
  sort: 1,
  isPublished: false,
  properties: { title },
  settings: {},
})
const LISTING = 'GET /api/demo/live/content'

describe.each(['spec', 'upstream'] as const)('%s dialect', (dialect) => {
  let em: Emulator
  let proxy: CountingProxy
  let root: string
  let client: RemoteClient

  /** A client with the workspace's listing cache, as the commands make it. */
  const connect = () =>
    createRemoteClient({
      server: proxy.url,
      project: 'demo',
      environment: 'live',
      token: em.token(),
      dialect: 'auto',
      rateLimit: { requestsPerSecond: 500, concurrency: 4 },
      backoff: { baseMs: 5, capMs: 20 },
      maxRetries: 1,
      listingCache: workspaceListingCache(root),
    })

  beforeEach(async () => {
    em = await startEmulator({ dialect })
    proxy = await startCountingProxy(em.url)
    root = await mkdtemp(path.join(os.tmpdir(), 'cms-listings-'))
    client = await connect()
    await client.put('content', 'home', page('home', 'Home'))
  })
  afterEach(async () => {
    await client.close()
    await proxy.close()
    await em.close()
    await rm(root, { recursive: true, force: true })
  })

  test('an unchanged listing is one 304, answered from the kept copy, in a later run too', async () => {
    const first = await client.listing('content')
    expect(first.kept).toBeUndefined()
    const items = first.items()
    // A later run: a new client over the same workspace.
    const later = await connect()
    try {
      const again = await later.listing('content')
      expect(again.kept).toBe(true)
      expect(again.items()).toEqual(items)
      expect(proxy.answered.filter((line) => line.startsWith(LISTING))).toEqual([
        `${LISTING} 200`,
        `${LISTING} 304`,
      ])
      // A by-id read still works after a listing that was never parsed on its own.
      expect(await later.get('content', 'home')).toMatchObject({ properties: { title: 'Home' } })
    } finally {
      await later.close()
    }
  })

  test("the tool's own write drops the kept listing: the next read is in full and shows the write", async () => {
    await client.list('content')
    await client.put('content', 'about', page('about', 'About'))
    const after = await client.listing('content')
    expect(after.kept).toBeUndefined()
    expect(after.items().map((item) => item.id)).toEqual(['home', 'about'])
  })

  test('listingUnchanged: true while nothing changed, false once someone else changed it', async () => {
    expect(await client.listingUnchanged('content')).toBe(false)
    await client.list('content')
    expect(await client.listingUnchanged('content')).toBe(true)
    const other = await createRemoteClient({
      server: em.url,
      project: 'demo',
      environment: 'live',
      token: em.token(),
      dialect,
      rateLimit: { requestsPerSecond: 500, concurrency: 1 },
    })
    try {
      await other.put('content', 'home', page('home', 'Edited elsewhere'))
    } finally {
      await other.close()
    }
    expect(await client.listingUnchanged('content')).toBe(false)
  })

  test('forms and connections are never kept on disk (submissions, secrets)', async () => {
    await client.put('form', 'contact', { id: 'contact', title: 'Contact', inputs: {} })
    await client.list('form')
    await client.list('connection')
    await client.list('content')
    const kept = await readdir(path.join(root, '.cms-sync', 'listings'))
    expect(kept.sort()).toEqual(['content.head.json', 'content.json'])
  })

  test('a listing the server keeps failing is a safety stop (exit 4) that names the listing, never an empty list', async () => {
    proxy.override = (method, route) =>
      method === 'GET' && route === '/api/demo/live/content' ? { status: 503, body: 'down' } : undefined
    const error = await client.list('content').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'listing', exitCode: ExitCode.safetyStop })
    expect((error as Error).message).toMatch(/^could not list content, so nothing was changed: /)
  })
})
