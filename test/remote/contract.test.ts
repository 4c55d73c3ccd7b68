// One contract for the client, run against the emulator in both dialects: the same calls give
// the same results whatever the server's quirks (text replies, 404 strings, empty forms,
// entries replaced on write, anonymous reads).

import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import type { RemoteClient, RemoteClientOptions, RemoteKind } from '../../src/remote/index.js'
import { demoClient } from '../helpers/demo-client.js'

const fast = { backoff: { baseMs: 5, capMs: 40 } }

const samples: Record<
  RemoteKind,
  { id: string; body: Record<string, unknown>; edit: Record<string, unknown> }
> = {
  schema: {
    id: 'article',
    body: {
      name: 'Article',
      icon: 'file',
      type: 'content',
      parentSchemaId: 'page',
      hiddenProperties: [],
      defaultTabId: 'content',
      tabs: { content: 'Content' },
      fields: { properties: { title: { label: 'Title', schemaId: 'string', tabId: 'content' } } },
      allowedAtRoot: true,
      allowedChildSchemas: [],
    },
    edit: { name: 'News article' },
  },
  content: {
    id: 'home',
    body: {
      parentId: '',
      schemaId: 'page',
      sort: 1,
      isPublished: true,
      properties: { title: 'Home' },
      settings: {},
    },
    edit: { properties: { title: 'Welcome' } },
  },
  form: {
    id: 'contact',
    body: {
      title: 'Contact',
      allowedOrigin: '',
      redirect: '',
      appendRedirect: false,
      inputs: { email: { type: 'text' } },
    },
    edit: { title: 'Contact us' },
  },
  connection: {
    id: 'website',
    body: {
      title: 'Website',
      url: 'https://example.com',
      processor: { alias: 'json' },
      deployer: { alias: 'filesystem', paths: { media: 'media', content: 'content' }, rootPath: '/tmp/site' },
    },
    edit: { title: 'Public website' },
  },
}

describe.each(['spec', 'upstream'] as const)('%s dialect', (dialect) => {
  let em: Emulator
  let client: RemoteClient

  /** A client of the emulator: admin token, auto-detected dialect, short backoff, unless overridden. */
  const connect = (extra: Partial<RemoteClientOptions> = {}) =>
    demoClient(em.url, em.token(), {
      rateLimit: { requestsPerSecond: 200, concurrency: 4 },
      ...fast,
      ...extra,
    })

  beforeEach(async () => {
    em = await startEmulator({ dialect })
    client = await connect()
  })
  afterEach(async () => {
    await client.close()
    await em.close()
  })

  test('auto-detects the dialect', () => {
    expect(client.dialect).toBe(dialect)
    expect(client.target).toEqual({ server: em.url, project: 'demo', environment: 'live' })
  })

  test.each(Object.keys(samples) as RemoteKind[])(
    '%s: put, get, list, edit, remove round trip',
    async (kind) => {
      const { id, body, edit } = samples[kind]
      expect(await client.get(kind, id)).toBeUndefined()
      const created = await client.put(kind, id, body, { expected: (current) => current === undefined })
      expect(created).toMatchObject({ id })
      expect(created).not.toHaveProperty('entries')
      const read = await client.get(kind, id)
      expect(read).toMatchObject({ id })
      expect(read).toEqual(created)
      const listed = await client.list(kind)
      expect(listed.map((item) => item.id)).toContain(id)

      const edited = await client.put(kind, id, { ...body, ...edit })
      expect(edited).toMatchObject({ id, ...edit })
      expect(await client.get(kind, id)).toMatchObject(edit)

      await client.remove(kind, id)
      expect(await client.get(kind, id)).toBeUndefined()
      // Removing what is gone counts as done.
      await client.remove(kind, id)
    },
  )

  test('schema listing leaves out the built-in schemas', async () => {
    await client.put('schema', 'article', samples.schema.body)
    const ids = (await client.list('schema')).map((s) => s.id)
    expect(ids).toEqual(['article'])
  })

  test('built-in schema ids and route words are refused before any request', async () => {
    const before = client.stats().requests
    await expect(client.put('schema', 'page', samples.schema.body)).rejects.toMatchObject({
      code: 'rejected',
    })
    await expect(client.put('content', 'new', samples.content.body)).rejects.toMatchObject({
      code: 'rejected',
    })
    await expect(client.remove('schema', 'contentBase')).rejects.toMatchObject({ code: 'rejected' })
    expect(client.stats().requests).toBe(before)
  })

  test('writing a form never loses its entries', async () => {
    const { id, body } = samples.form
    await client.put('form', id, body)
    const submit = await client.request('POST', `/api/demo/live/forms/${id}/submit`, {
      body: { email: 'a@example.com' },
      idempotent: false,
    })
    expect(submit.status).toBeLessThan(500)
    const entriesBefore = (
      (await client.request('GET', `/api/demo/live/forms/${id}`)).body as { entries: unknown[] }
    ).entries
    expect(entriesBefore).toHaveLength(1)
    await client.put('form', id, { ...body, title: 'Changed', entries: [] })
    const after = (await client.request('GET', `/api/demo/live/forms/${id}`)).body as {
      title: string
      entries: unknown[]
    }
    expect(after.title).toBe('Changed')
    expect(after.entries).toEqual(entriesBefore)
    expect((await client.list('form'))[0]).not.toHaveProperty('entries')
  })

  test('checkToken names the user; a bad token is UnauthorizedError', async () => {
    expect(await client.checkToken()).toMatchObject({ username: 'admin' })
    const bad = await connect({ token: 'f'.repeat(40) })
    try {
      const error = await bad.checkToken().catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'unauthorized', name: 'UnauthorizedError' })
      expect((error as Error).message).toMatch(/cms-sync login.*CMS_SYNC_TOKEN/)
    } finally {
      await bad.close()
    }
  })

  test('a write without a valid token fails as unauthorized, whatever status the dialect uses', async () => {
    const anon = await connect({ token: undefined })
    try {
      expect(anon.dialect).toBe(dialect)
      await expect(anon.put('content', 'home', samples.content.body)).rejects.toMatchObject({
        code: 'unauthorized',
      })
    } finally {
      await anon.close()
    }
  })

  test('an unknown project fails the listing instead of reading as empty', async () => {
    const other = await connect({ project: 'nope', dialect })
    try {
      const error = await other.list('content').catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'listing' })
      expect((error as Error).message).toContain('Project "nope"')
      await expect(other.get('content', 'home')).rejects.toMatchObject({ code: 'not-found' })
    } finally {
      await other.close()
    }
  })

  test('a write the emulator applies and then drops (drop-after) is re-read, not re-sent', async () => {
    const { id, body } = samples.content
    // One drop-after, on the write only: the emulator's own fault path, decided once.
    const decide = em.faults.decide.bind(em.faults)
    let armed = true
    em.faults.decide = () => {
      if (!armed) return decide()
      armed = false
      em.faults.counts.requests++
      em.faults.counts['drop-after']++
      return { kind: 'drop-after' }
    }
    const before = em.faults.counts.requests
    const stored = await client.put('content', id, body, { expected: (current) => current === undefined })
    expect(stored).toMatchObject({ id, properties: { title: 'Home' } })
    expect(em.faults.counts['drop-after']).toBe(1)
    // One POST (dropped after applying), then the re-read: no second POST.
    expect(em.faults.counts.requests - before).toBe(2)
    expect(client.stats().byStatusClass.network).toBe(1)
  })

  test('under random faults every write lands exactly as sent', async () => {
    em.setFaults('error=0.1,drop=0.05,drop-after=0.1,429=0.05', 7)
    const ids = Array.from({ length: 12 }, (_, i) => `page${i}`)
    const faulty = await connect({ dialect, maxRetries: 10 })
    try {
      await Promise.all(
        ids.map((id, i) =>
          faulty.put('content', id, { ...samples.content.body, sort: i + 1, properties: { title: id } }),
        ),
      )
      em.setFaults({})
      for (const [i, id] of ids.entries())
        expect(await faulty.get('content', id)).toMatchObject({ id, sort: i + 1, properties: { title: id } })
      expect(faulty.stats().retries).toBeGreaterThan(0)
    } finally {
      await faulty.close()
    }
  })

  test('the emulator rate limit is never hit at the configured rate', async () => {
    em.setRateLimit(5)
    const limited = await connect({ dialect, rateLimit: { requestsPerSecond: 5, concurrency: 4 } })
    try {
      await Promise.all(Array.from({ length: 12 }, (_, i) => limited.get('content', `x${i}`)))
      expect(em.faults.counts['rate-limit']).toBe(0)
      expect(limited.stats().rateLimited).toBe(0)
    } finally {
      await limited.close()
    }
  })
})
