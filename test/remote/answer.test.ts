// What a request comes to, classified once (src/remote/answer.ts): every kind of the union as a
// real server gives it, in both dialects, through `client.send`. The callers (items, listings,
// media) switch on these kinds; a wrong kind here is a missing item read as a failure, or a
// failure read as a missing item.

import { createServer } from 'node:net'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import { createRemoteClient, type RemoteClient, type RemoteClientOptions } from '../../src/remote/index.js'
import { type CountingProxy, startCountingProxy } from '../helpers/counting-proxy.js'
import { demoClient } from '../helpers/demo-client.js'

const fast = { backoff: { baseMs: 5, capMs: 20 } }
const P = '/api/demo/live'
const page = {
  parentId: '',
  schemaId: 'page',
  sort: 1,
  isPublished: true,
  properties: { title: 'Home' },
  settings: {},
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe.each(['spec', 'upstream'] as const)('%s dialect', (dialect) => {
  let em: Emulator
  let proxy: CountingProxy
  let client: RemoteClient
  const connect = (extra: Partial<RemoteClientOptions> = {}) =>
    demoClient(proxy.url, em.token(), { maxRetries: 2, ...fast, ...extra })

  beforeEach(async () => {
    em = await startEmulator({ dialect })
    proxy = await startCountingProxy(em.url)
    client = await connect()
  })
  afterEach(async () => {
    await client.close()
    await proxy.close()
    await em.close()
  })

  test('ok, and not-modified for a conditional read of an unchanged listing', async () => {
    const first = await client.send('GET', `${P}/content`)
    expect(first.kind).toBe('ok')
    const etag = first.kind === 'ok' ? first.response.headers.etag : undefined
    expect(typeof etag).toBe('string')
    const again = await client.send('GET', `${P}/content`, { headers: { 'if-none-match': String(etag) } })
    expect(again.kind).toBe('not-modified')
  })

  test('a missing item is not-found with item: true; a missing project is not-found, not an item', async () => {
    const item = await client.send('GET', `${P}/content/nobody`, { itemId: 'nobody' })
    expect(item).toMatchObject({ kind: 'not-found', item: true })
    const project = await client.send('GET', '/api/nowhere/live/content')
    expect(project).toMatchObject({ kind: 'not-found', item: false })
    // The failure names what was asked, in the caller's words.
    if (project.kind !== 'not-found') throw new Error('not reached')
    expect(project.fail('could not read the listing').message).toMatch(/^could not read the listing \(GET/)
  })

  test('a write the server refuses for good is rejected with its status and its words', async () => {
    const answer = await client.send('POST', `${P}/content/home?create=true`, {
      body: { ...page, id: 'home', parentId: 'home' },
      itemId: 'home',
    })
    expect(answer.kind).toBe('rejected')
    if (answer.kind !== 'rejected') throw new Error('not reached')
    // Upstream answers validation errors with 404 (§1.3): still a refusal, never a missing item.
    expect(answer.status).toBe(dialect === 'spec' ? 400 : 404)
    expect(answer.message).not.toBe('')
    expect(answer.error.code).toBe('rejected')
  })

  test('a refused token is unauthorized, whatever status the dialect answers it with', async () => {
    const anonymous = await connect({ token: undefined })
    try {
      const answer = await anonymous.send('POST', `${P}/content/home?create=true`, {
        body: page,
        itemId: 'home',
      })
      expect(answer.kind).toBe('unauthorized')
    } finally {
      await anonymous.close()
    }
  })

  test('a server that keeps failing: retry, with its cause, once the tries are spent', async () => {
    proxy.override = (method) => (method === 'GET' ? { status: 503, body: 'busy' } : undefined)
    const before = proxy.seen.length
    const answer = await client.send('GET', `${P}/content`)
    expect(answer).toMatchObject({ kind: 'retry', cause: '5xx' })
    if (answer.kind !== 'retry') throw new Error('not reached')
    expect(answer.error.message).toMatch(/kept failing after 3 tries/)
    expect(proxy.seen.length - before).toBe(3)
  })

  test('429 is retry with cause 429 and the wait the server asked for', async () => {
    proxy.override = () => ({ status: 429, body: 'slow down', headers: { 'retry-after': '0' } })
    const answer = await client.send('GET', `${P}/content`)
    expect(answer).toMatchObject({ kind: 'retry', cause: '429', told: true, afterMs: 0 })
  })

  test('a 5xx on a request that is not safe to repeat is ambiguous, and sent once', async () => {
    proxy.override = (method) => (method === 'POST' ? { status: 500, body: 'oops' } : undefined)
    const before = proxy.seen.length
    const answer = await client.send('POST', `${P}/content/home?create=true`, {
      body: page,
      idempotent: false,
    })
    expect(answer.kind).toBe('ambiguous')
    expect(proxy.seen.length - before).toBe(1)
    // Thrown where a caller reads responses (request()): marked so that it can be settled.
    await expect(
      client.request('POST', `${P}/content/home?create=true`, { body: page, idempotent: false }),
    ).rejects.toMatchObject({ ambiguous: true, status: 500 })
  })

  test('no server at all: retry with cause network, even for a write (nothing was sent)', async () => {
    const nowhere = await createRemoteClient({
      server: `http://127.0.0.1:${await closedPort()}`,
      project: 'demo',
      environment: 'live',
      token: 't',
      dialect,
      rateLimit: { requestsPerSecond: 500, concurrency: 1 },
      maxRetries: 1,
      ...fast,
    })
    try {
      const answer = await nowhere.send('POST', `${P}/content/home?create=true`, {
        body: page,
        idempotent: false,
      })
      expect(answer).toMatchObject({ kind: 'retry', cause: 'network' })
      if (answer.kind !== 'retry') throw new Error('not reached')
      expect(answer.error.code).toBe('network')
    } finally {
      await nowhere.close()
    }
  })
})
