// A kind's listing (src/remote/listings.ts) in both dialects against the emulator over real
// HTTP: asked with the validator recorded for the listing the bases equal, so an unchanged
// listing costs one 304 and nothing is read; the tool's own writes drop the validator; refused
// whole (a safety stop) when the server fails it: never read as empty.

import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import { ExitCode } from '../../src/errors/exit-codes.js'
import type { ListingValidator } from '../../src/remote/client-types.js'
import { createRemoteClient, type RemoteClient } from '../../src/remote/index.js'
import { type CountingProxy, startCountingProxy } from '../helpers/counting-proxy.js'
import { page } from '../helpers/demo-client.js'

const LISTING = 'GET /api/demo/live/content'

describe.each(['spec', 'upstream'] as const)('%s dialect', (dialect) => {
  let em: Emulator
  let proxy: CountingProxy
  let client: RemoteClient
  /** Where the validators are recorded: a run's StateStore has the same two methods. */
  let recorded: Map<string, ListingValidator>
  const validators = () => ({
    validatorOf: (name: string) => recorded.get(name),
    dropValidator: (name: string) => void recorded.delete(name),
  })

  const connect = async () => {
    const made = await createRemoteClient({
      server: proxy.url,
      project: 'demo',
      environment: 'live',
      token: em.token(),
      dialect: 'auto',
      rateLimit: { requestsPerSecond: 500, concurrency: 4 },
      backoff: { baseMs: 5, capMs: 20 },
      maxRetries: 1,
    })
    made.useValidators(validators())
    return made
  }

  beforeEach(async () => {
    em = await startEmulator({ dialect })
    proxy = await startCountingProxy(em.url)
    recorded = new Map()
    client = await connect()
    await client.put('content', 'home', page('home', 'Home'))
  })
  afterEach(async () => {
    await client.close()
    await proxy.close()
    await em.close()
  })

  test('asked with the recorded validator, an unchanged listing is one 304 with no items read', async () => {
    const first = await client.listing('content', { conditional: true })
    expect(first.unchanged).toBeUndefined()
    expect(first.items().map((item) => item.id)).toEqual(['home'])
    recorded.set('content', first.validator!)
    // A later run: a new client, the same recorded validator.
    const later = await connect()
    try {
      const again = await later.listing('content', { conditional: true })
      expect(again.unchanged).toEqual(first.validator)
      expect(() => again.items()).toThrow(/304/)
      expect(proxy.answered.filter((line) => line.startsWith(LISTING))).toEqual([
        `${LISTING} 200`,
        `${LISTING} 304`,
      ])
      // A by-id read still works after a listing whose ids were never seen.
      expect(await later.get('content', 'home')).toMatchObject({ properties: { title: 'Home' } })
    } finally {
      await later.close()
    }
  })

  test('a validator recorded for another URL is never sent', async () => {
    const first = await client.listing('content')
    recorded.set('content', { ...first.validator!, url: 'http://elsewhere.example/api/demo/live/content' })
    const again = await client.listing('content', { conditional: true })
    expect(again.unchanged).toBeUndefined()
    expect(proxy.answered.filter((line) => line.startsWith(LISTING))).toEqual([
      `${LISTING} 200`,
      `${LISTING} 200`,
    ])
  })

  test("the tool's own write drops the kind's validator: the next read is in full and shows the write", async () => {
    recorded.set('content', (await client.listing('content')).validator!)
    recorded.set('schemas', (await client.listing('schema')).validator!)
    await client.put('content', 'about', page('about', 'About'))
    expect([...recorded.keys()]).toEqual(['schemas'])
    const after = await client.listing('content', { conditional: true })
    expect(after.unchanged).toBeUndefined()
    expect(after.items().map((item) => item.id)).toEqual(['home', 'about'])
  })

  /** Another client (a teammate, the CMS's editor) changes an item: the listing moves under us. */
  async function editElsewhere(id: string, title: string): Promise<void> {
    const other = await createRemoteClient({
      server: em.url,
      project: 'demo',
      environment: 'live',
      token: em.token(),
      dialect,
      rateLimit: { requestsPerSecond: 500, concurrency: 1 },
    })
    try {
      await other.put('content', id, page(id, title))
    } finally {
      await other.close()
    }
  }

  test('listingUnchanged: false with no validator, true while nothing changed, false once someone else changed it', async () => {
    expect(await client.listingUnchanged('content')).toBe(false)
    recorded.set('content', (await client.listing('content')).validator!)
    expect(await client.listingUnchanged('content')).toBe(true)
    await editElsewhere('home', 'Edited elsewhere')
    expect(await client.listingUnchanged('content')).toBe(false)
  })

  test("a check that found the listing changed hands its answer to the next read, once; one dropped or behind the tool's own write is asked again", async () => {
    recorded.set('content', (await client.listing('content')).validator!)
    const asked = () => proxy.answered.filter((line) => line.startsWith(LISTING)).length
    await editElsewhere('home', 'Edited elsewhere')
    let before = asked()
    expect(await client.listingUnchanged('content')).toBe(false)
    const taken = await client.listing('content', { conditional: true })
    // One request: the check's 200, read by the listing that followed.
    expect(asked() - before).toBe(1)
    expect(taken.items()).toEqual([expect.objectContaining({ properties: { title: 'Edited elsewhere' } })])
    expect(taken.validator?.etag).not.toBe(recorded.get('content')?.etag)
    // Taken once: the next read asks again.
    before = asked()
    await client.listing('content', { conditional: true })
    expect(asked() - before).toBe(1)

    // Dropped (no run took it): the next read asks, and sees what changed since.
    expect(await client.listingUnchanged('content')).toBe(false)
    client.forgetCheckedListings()
    await editElsewhere('about', 'About')
    before = asked()
    const fresh = await client.listing('content', { conditional: true })
    expect(asked() - before).toBe(1)
    expect(fresh.items().map((item) => item.id)).toEqual(['home', 'about'])

    // The tool's own write to the kind drops it too.
    recorded.set('content', (await client.listing('content')).validator!)
    await editElsewhere('news', 'News')
    expect(await client.listingUnchanged('content')).toBe(false)
    await client.put('content', 'contact', page('contact', 'Contact'))
    const own = await client.listing('content', { conditional: true })
    expect(own.items().map((item) => item.id)).toEqual(['home', 'about', 'news', 'contact'])
  })

  test('a listing the server keeps failing is a safety stop (exit 4) that names the listing, never an empty list', async () => {
    proxy.override = (method, route) =>
      method === 'GET' && route === '/api/demo/live/content' ? { status: 503, body: 'down' } : undefined
    const error = await client.list('content').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'listing', exitCode: ExitCode.safetyStop })
    expect((error as Error).message).toMatch(/^could not list content, so nothing was changed: /)
  })
})
