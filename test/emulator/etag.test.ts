// Listings answer conditional GETs in both dialects, as the real server (Express) does: a weak
// ETag on every 200, 304 without a body when If-None-Match names it, a new ETag after a change.

import { describe, expect, test } from 'vitest'
import { weakEtag } from '../../src/emulator/etag.js'
import { names } from '../../src/emulator/store.js'
import { client, DIALECTS, login, start, tempDir } from './helpers.js'

test("the ETag is Express's: the real server answers an empty listing with this one", () => {
  expect(weakEtag('[]')).toBe('W/"2-l9Fw4VUO7kr8CvBlt4zaMCqXZ0w"')
})

describe.each(DIALECTS)('%s dialect', (dialect) => {
  test('a listing is 304 while unchanged and 200 with a new ETag after a write', async () => {
    const emulator = await start({ dialect })
    const c = client(emulator, await login(emulator))
    const first = await c.get('P/schemas')
    expect(first.status).toBe(200)
    const etag = first.headers.get('etag')
    expect(etag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/)

    const again = await c.get('P/schemas', { headers: { 'if-none-match': etag! } })
    expect(again.status).toBe(304)
    expect(again.text).toBe('')
    expect(again.headers.get('etag')).toBe(etag)

    // A new schema changes the listing: the old ETag no longer matches.
    const created = await c.post('P/schemas/new?parentSchemaId=contentBase', { name: 'Page' })
    expect(created.status).toBeLessThan(300)
    const changed = await c.get('P/schemas', { headers: { 'if-none-match': etag! } })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
    expect(changed.json().length).toBe(first.json().length + 1)
  })

  test('only GETs that succeed carry an ETag; another ETag gets the whole body', async () => {
    const emulator = await start({ dialect })
    const c = client(emulator, await login(emulator))
    const missing = await c.get('P/content/nowhere')
    expect(missing.headers.get('etag')).toBeNull()
    const other = await c.get('P/content', { headers: { 'if-none-match': 'W/"2-somethingelse"' } })
    expect(other.status).toBe(200)
    expect(other.json()).toEqual([])
  })
})

// The bench's floors (conditional listings, all 304) must measure the client, not the emulator:
// the spec dialect versions each collection and answers a matching If-None-Match before it
// builds the listing. Upstream keeps the real server's way: it builds the body and hashes it.
describe('a conditional listing of a large collection', () => {
  const ITEMS = 10_000
  const fill = (emulator: Awaited<ReturnType<typeof start>>) => {
    const collection = names.env('demo', 'live', 'content')
    for (let i = 0; i < ITEMS; i++)
      emulator.store.put(collection, `node-${i}`, {
        id: `node-${i}`,
        parentId: '',
        schemaId: 'page',
        sort: i,
        properties: { title: `Page ${i}` },
      })
  }

  test('spec: 304 without building the body, until a write to that collection', async () => {
    const emulator = await start({ dialect: 'spec' })
    fill(emulator)
    const c = client(emulator, await login(emulator))
    const first = await c.get('P/content')
    expect(first.status).toBe(200)
    expect(first.json()).toHaveLength(ITEMS)
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/)
    const built = emulator.stats.listingsBuilt
    expect(built).toBeGreaterThan(0)

    const again = await c.get('P/content', { headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)
    expect(again.text).toBe('')
    expect(again.headers.get('etag')).toBe(etag)
    expect(emulator.stats.listingsBuilt).toBe(built)

    // A write to another collection leaves this listing's version alone.
    const schema = await c.post('P/schemas/new?parentSchemaId=contentBase', { name: 'Page' })
    expect(schema.status).toBeLessThan(300)
    expect((await c.get('P/content', { headers: { 'if-none-match': etag } })).status).toBe(304)
    expect(emulator.stats.listingsBuilt).toBe(built)

    // A write to the collection itself, even one that leaves the body as it was, is a new version.
    const item = emulator.store.get(names.env('demo', 'live', 'content'), 'node-7')
    emulator.store.put(names.env('demo', 'live', 'content'), 'node-7', item)
    const changed = await c.get('P/content', { headers: { 'if-none-match': etag } })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
    expect(changed.json()).toHaveLength(ITEMS)
    expect(emulator.stats.listingsBuilt).toBe(built + 1)
  })

  test('spec: a listing read with other parameters has an ETag of its own', async () => {
    const emulator = await start({ dialect: 'spec' })
    const c = client(emulator, await login(emulator))
    const all = (await c.get('P/schemas')).headers.get('etag')!
    const custom = await c.get('P/schemas?customOnly=true', { headers: { 'if-none-match': all } })
    expect(custom.status).toBe(200)
    expect(custom.headers.get('etag')).not.toBe(all)
  })

  test('spec: a restarted emulator never answers 304 to an ETag of a listing since changed', async () => {
    // The restarted store loads its snapshot: its counts start again, so a bare count would repeat.
    const dataDir = tempDir()
    const first = await start({ dialect: 'spec', dataDir })
    const etag = (await client(first, await login(first)).get('P/content')).headers.get('etag')!
    first.store.put(names.env('demo', 'live', 'content'), 'node-1', { id: 'node-1', sort: 1 })
    await first.close()
    const second = await start({ dialect: 'spec', dataDir })
    const again = await client(second, await login(second)).get('P/content', {
      headers: { 'if-none-match': etag },
    })
    expect(again.status).toBe(200)
    expect(again.json()).toHaveLength(1)
  })

  test("upstream: the ETag is the body's hash, the body built for every conditional GET", async () => {
    const emulator = await start({ dialect: 'upstream' })
    fill(emulator)
    const c = client(emulator, await login(emulator))
    const first = await c.get('P/content')
    const etag = first.headers.get('etag')!
    expect(etag).toBe(weakEtag(first.text))
    const built = emulator.stats.listingsBuilt
    const again = await c.get('P/content', { headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)
    expect(emulator.stats.listingsBuilt).toBe(built + 1)
  })
})
