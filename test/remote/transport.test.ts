// The client's HTTP behaviour against a real server on a free port: retries, Retry-After,
// rate limit, timeouts, ambiguous writes, redirects, body caps, and the token kept secret.

import { mkdtemp, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createLogger, logFilePath } from '../../src/log/logger.js'
import { createRemoteClient, type RemoteClient, RemoteError } from '../../src/remote/index.js'
import { MINI_CMS_TOKEN, type MiniCms, miniCmsClient, startMiniCms } from '../helpers/mini-cms.js'

const TOKEN = MINI_CMS_TOKEN
let cms: MiniCms
let client: RemoteClient | undefined

beforeEach(async () => {
  cms = await startMiniCms()
})
afterEach(async () => {
  await client?.close()
  client = undefined
  await cms.close()
})

async function open(extra: Parameters<typeof miniCmsClient>[1] = {}): Promise<RemoteClient> {
  client = await miniCmsClient(cms, extra)
  return client
}

const writes = () => cms.requests.filter((r) => r.method === 'POST')

/** The first request gets this answer; the rest go to the mini CMS. */
function answerFirst(status: number, headers: Record<string, string>, body = ''): void {
  let first = true
  cms.hook = (_req, res) => {
    if (!first) return false
    first = false
    res.writeHead(status, headers).end(body)
    return true
  }
}

describe('retries', () => {
  test('a 503 is retried and the second answer wins', async () => {
    let failures = 1
    cms.hook = (_req, res) => {
      if (failures-- <= 0) return false
      res.writeHead(503).end('busy')
      return true
    }
    const c = await open()
    expect(await c.list('content')).toEqual([])
    expect(cms.requests).toHaveLength(2)
    expect(c.stats()).toMatchObject({ requests: 2, retries: 1, byStatusClass: { '2xx': 1, '5xx': 1 } })
  })

  test('Retry-After in seconds is honoured before the retry', async () => {
    answerFirst(429, { 'retry-after': '1' }, 'slow down')
    const c = await open()
    await c.list('schema')
    const [a, b] = cms.requests
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(990)
    expect(c.stats().rateLimited).toBe(1)
  })

  test('Retry-After as an HTTP date is honoured', async () => {
    // HTTP dates have 1 s resolution: 2 s ahead is at least 1 s of wait.
    answerFirst(429, { 'retry-after': new Date(Date.now() + 2000).toUTCString() })
    const c = await open()
    await c.list('schema')
    const [a, b] = cms.requests
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(1000)
  })

  test('Retry-After on a 503 is honoured too', async () => {
    answerFirst(503, { 'retry-after': '1' }, 'maintenance')
    const c = await open()
    await c.get('content', 'home')
    const [a, b] = cms.requests
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(990)
  })

  test('a Retry-After beyond what a command can wait fails clearly instead of hanging', async () => {
    cms.hook = (_req, res) => {
      res.writeHead(429, { 'retry-after': '3600' }).end()
      return true
    }
    const c = await open()
    const error = await c.get('content', 'home').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'rate-limited', status: 429 })
    expect((error as Error).message).toContain('asked to wait 3600 s')
    expect(cms.requests).toHaveLength(1)
  })

  test('creating routes are never repeated blindly, even as GET', async () => {
    cms.hook = (_req, res) => {
      res.socket?.destroy()
      return true
    }
    const c = await open()
    const error = await c.request('GET', '/api/demo/live/media/new').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'network', ambiguous: true })
    expect(cms.requests).toHaveLength(1)
    // The same failure on an ordinary read is retried.
    await c.request('GET', '/api/demo/live/content/home').catch(() => {})
    expect(cms.requests).toHaveLength(1 + 5)
  })

  test('a server that keeps failing gets maxRetries + 1 tries, no more', async () => {
    cms.hook = (_req, res) => {
      res.writeHead(500).end('boom')
      return true
    }
    const c = await open({ maxRetries: 3 })
    const error = await c.get('content', 'home').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RemoteError)
    expect(error).toMatchObject({ code: 'server', status: 500, route: '/api/demo/live/content/home' })
    expect(cms.requests).toHaveLength(4)
  })

  test('a 4xx is not retried', async () => {
    cms.hook = (_req, res) => {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Field "sort" must be a number')
      return true
    }
    const c = await open()
    const error = await c.put('content', 'home', { sort: 'x' }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'rejected', status: 400, itemId: 'home' })
    expect((error as Error).message).toContain('Field "sort" must be a number')
    expect(cms.requests).toHaveLength(1)
  })

  test('a request with no answer times out, and is retried', async () => {
    cms.hook = () => true // never answers
    const c = await open({ timeoutMs: 200, maxRetries: 1 })
    const started = Date.now()
    const error = await c.get('content', 'home').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'timeout' })
    expect(cms.requests).toHaveLength(2)
    expect(Date.now() - started).toBeLessThan(3000)
  })

  test('a refused connection is a network error after the retries', async () => {
    const url = cms.url
    await cms.close()
    cms = await startMiniCms()
    const error = await createRemoteClient({
      server: url,
      project: 'demo',
      environment: 'live',
      dialect: 'spec',
      rateLimit: { requestsPerSecond: 100, concurrency: 2 },
      maxRetries: 1,
      backoff: { baseMs: 5, capMs: 5 },
    })
      .then((c) => c.list('content'))
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'listing' })
    expect((error as Error).message).toMatch(/could not reach/)
  })
})

describe('rate limit', () => {
  test('no sliding 1-second window at the server ever holds more than requestsPerSecond', async () => {
    const c = await open({ rateLimit: { requestsPerSecond: 5, concurrency: 4 } })
    await Promise.all(Array.from({ length: 16 }, (_, i) => c.get('content', `item${i}`)))
    const times = cms.requests.map((r) => r.at).sort((a, b) => a - b)
    expect(times).toHaveLength(16)
    for (let i = 0; i < times.length; i++) {
      const inWindow = times.filter((t) => t >= times[i]! && t < times[i]! + 1000).length
      expect(inWindow).toBeLessThanOrEqual(5)
    }
  })

  test('two clients of one server share the limit (one queue per process)', async () => {
    const a = await open({ rateLimit: { requestsPerSecond: 4, concurrency: 2 } })
    const b = await createRemoteClient({
      server: cms.url,
      project: 'demo',
      environment: 'live',
      dialect: 'spec',
      rateLimit: { requestsPerSecond: 4, concurrency: 2 },
    })
    try {
      const t0 = Date.now()
      await Promise.all(
        [0, 1, 2, 3, 4, 5].flatMap((i) => [a.get('content', `a${i}`), b.get('content', `b${i}`)]),
      )
      // 12 requests at 4 per second: the third batch cannot start before 2 s.
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2000)
      expect(a.stats().requests).toBe(6)
      expect(b.stats().requests).toBe(6)
    } finally {
      await b.close()
    }
  })

  test('one 429 with Retry-After holds every request, not only the one that got it', async () => {
    answerFirst(429, { 'retry-after': '1' })
    const c = await open({ rateLimit: { requestsPerSecond: 1000, concurrency: 1 } })
    const t0 = Date.now()
    await c.get('content', 'a')
    await Promise.all([c.get('content', 'b'), c.get('content', 'c')])
    expect(Date.now() - t0).toBeGreaterThanOrEqual(990)
    expect(cms.requests).toHaveLength(4)
  })
})

describe('ambiguous writes', () => {
  const home = { parentId: '', schemaId: 'page', sort: 1, properties: { title: 'Home' } }

  test('a write the server applied before dropping the connection is re-read, not re-sent', async () => {
    cms.hook = (req, res, body) => {
      if (req.method !== 'POST' || writes().length > 1) return false
      cms.apply('content', 'home', body)
      res.socket?.destroy()
      return true
    }
    const c = await open()
    const stored = await c.put('content', 'home', home, { expected: (cur) => cur === undefined })
    expect(stored).toMatchObject({ id: 'home', properties: { title: 'Home' } })
    expect(writes()).toHaveLength(1)
    expect(cms.requests.map((r) => r.method)).toEqual(['POST', 'GET'])
  })

  test('a write that did not land is sent again when the item is still as planned', async () => {
    cms.hook = (req, res) => {
      if (req.method !== 'POST' || writes().length > 1) return false
      res.socket?.destroy()
      return true
    }
    const c = await open()
    const stored = await c.put('content', 'home', home, { expected: (cur) => cur === undefined })
    expect(stored).toMatchObject({ id: 'home' })
    expect(cms.requests.map((r) => r.method)).toEqual(['POST', 'GET', 'POST'])
  })

  test('a 5xx on a write is ambiguous too, and someone else changing the item meanwhile is a conflict', async () => {
    cms.hook = (req, res) => {
      if (req.method !== 'POST') return false
      cms.apply('content', 'home', JSON.stringify({ ...home, properties: { title: 'Theirs' } }))
      res.writeHead(502).end('bad gateway')
      return true
    }
    const c = await open()
    const error = await c
      .put('content', 'home', home, { expected: (cur) => cur === undefined })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'conflict', itemId: 'home' })
    expect(writes()).toHaveLength(1)
    expect(cms.store.get('content')!.get('home')).toMatchObject({ properties: { title: 'Theirs' } })
  })

  test('server-owned fields and a server-picked sort do not count as a difference', async () => {
    cms.hook = (req, res, body) => {
      if (req.method !== 'POST' || writes().length > 1) return false
      const item = cms.apply('content', 'home', body)
      Object.assign(item, { sort: 7, updatedBy: 'u1', isLocked: false, sync: {}, createDate: 'x' })
      res.socket?.destroy()
      return true
    }
    const c = await open()
    await c.put('content', 'home', { ...home, sort: -1 }, { expected: () => false })
    expect(writes()).toHaveLength(1)
  })
})

describe('responses', () => {
  test('a redirect is refused, not followed', async () => {
    cms.hook = (_req, res) => {
      res.writeHead(302, { location: 'https://elsewhere.example/api/demo/live/content?token=abc' }).end()
      return true
    }
    const c = await open()
    const error = await c.get('content', 'home').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'rejected', status: 302 })
    expect((error as Error).message).toContain('does not follow redirects')
    expect((error as Error).message).not.toContain('token=abc')
    expect(cms.requests).toHaveLength(1)
  })

  test('a body larger than the cap fails clearly', async () => {
    cms.hook = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      res.end(Buffer.alloc(256 * 1024))
      return true
    }
    const c = await open()
    const error = await c
      .request('GET', '/media/demo/live/big', { maxBytes: 64 * 1024 })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'too-large' })
    expect((error as Error).message).toContain('larger than 64 KB')
  })

  test('a declared length over the cap is refused before the body is read, for a sink too', async () => {
    let written = 0
    cms.hook = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 8 * 1024 * 1024 })
      const chunk = Buffer.alloc(64 * 1024)
      const pump = (): void => {
        while (written < 8 * 1024 * 1024) {
          written += chunk.length
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        res.end()
      }
      res.on('close', () => res.removeAllListeners('drain'))
      pump()
      return true
    }
    const c = await open()
    let sinkSaw = 0
    const error = await c
      .request('GET', '/media/demo/live/big', {
        maxBytes: 64 * 1024,
        sink: async (body) => {
          for await (const chunk of body) sinkSaw += chunk.length
        },
      })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'too-large' })
    expect(sinkSaw).toBe(0)
    expect(cms.requests).toHaveLength(1) // not retried
  })

  test('a listing over listMaxBytes is a safety stop that names limits.listingMB', async () => {
    cms.hook = (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify([{ id: 'a', pad: 'x'.repeat(200_000) }]))
      return true
    }
    const c = await open({ listMaxBytes: 100_000 })
    const error = await c.list('content').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'listing', exitCode: 4 })
    expect((error as Error).message).toMatch(/larger than 0 MB.*raise limits\.listingMB/)
  })

  test('listings that are not arrays of objects with string ids are refused', async () => {
    const c = await open()
    for (const body of ['{"a":1}', '[{"name":"x"}]', '[{"id":"a"},{"id":"a"}]', 'OK']) {
      cms.hook = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(body)
        return true
      }
      await expect(c.list('content')).rejects.toMatchObject({
        code: 'listing',
        name: 'ListingError',
        exitCode: 4,
      })
    }
  })

  test('a 403 listing is a safety stop (exit 4); a 401 is the token to fix (exit 2)', async () => {
    const c = await open()
    for (const [status, exitCode] of [
      [403, 4],
      [401, 2],
    ] as const) {
      cms.hook = (_req, res) => {
        res.writeHead(status, { 'content-type': 'text/plain' }).end('no')
        return true
      }
      const error = (await c.list('content').catch((e: unknown) => e)) as RemoteError
      expect(error.exitCode, String(status)).toBe(4)
      // The engine stops on a refused token as itself (remote-snapshot), on any other cause for
      // the listing: a 403 stays exit 4, a 401 becomes exit 2.
      expect((error.cause as RemoteError).code, String(status)).toBe(
        status === 401 ? 'unauthorized' : 'forbidden',
      )
      if (status === 401) expect((error.cause as RemoteError).exitCode).toBe(exitCode)
    }
  })

  test('401 tells the user to log in', async () => {
    cms.hook = (_req, res) => {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized')
      return true
    }
    const c = await open()
    const error = await c.get('content', 'home').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'unauthorized', name: 'UnauthorizedError' })
    expect((error as Error).message).toMatch(/cms-sync login.*CMS_SYNC_TOKEN/)
  })
})

describe('secrets', () => {
  test('the token is sent, but never appears in errors, their JSON, or the log file', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-log-'))
    const logger = createLogger({ root, level: 'trace' })
    cms.hook = (req, res) => {
      // A server that echoes the request back, token included.
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`failed for ${req.headers.cookie} ${req.url}`)
      return true
    }
    const c = await open({ logger, maxRetries: 0 })
    const error = (await c
      .request('GET', `/api/demo/live/content/home?token=${TOKEN}`)
      .catch((e: unknown) => e)) as RemoteError
    expect(cms.requests[0]!.headers.cookie).toBe(`token=${TOKEN}`)
    expect(cms.requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`)
    logger.info({ token: TOKEN, password: 'hunter2', headers: { cookie: `token=${TOKEN}` } }, 'oops')
    await new Promise<void>((resolve) => logger.flush(() => resolve()))
    // A failing put exercises the write error path too.
    const putError = await c.put('content', 'home', {}).catch((e: unknown) => e)
    for (const text of [
      JSON.stringify(error),
      String(putError),
      JSON.stringify(putError),
      (putError as Error).stack,
    ]) {
      expect(text).not.toContain(TOKEN)
    }
    // A server that quotes a refused write back: the secret values the body carried are scrubbed.
    cms.hook = (_req, res, body) => {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`bad body: ${body}`)
      return true
    }
    const connection = {
      id: 'c',
      title: 'C',
      deployer: { alias: 'git', password: 'pw-in-the-body-42', apiKey: 'k-99x' },
    }
    const echoed = (await c.put('connection', 'c', connection).catch((e: unknown) => e)) as RemoteError
    expect(echoed.serverMessage).toContain('bad body')
    for (const text of [String(echoed), JSON.stringify(echoed)]) {
      expect(text).not.toContain('pw-in-the-body-42')
      expect(text).not.toContain('k-99x')
    }
    // The log file is opened and written asynchronously: wait for the line (a loaded machine is slow).
    let log = ''
    for (let i = 0; i < 100 && !log.includes('oops'); i++) {
      log = await readFile(logFilePath(root), 'utf8').catch(() => '')
      if (!log.includes('oops')) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(log).toContain('oops')
    expect(log).not.toContain(TOKEN)
    expect(log).not.toContain('hunter2')
  })
})

describe('giving a request up (a run that failed no longer needs its listings)', () => {
  test('a listing given up before it is sent never reaches the server', async () => {
    const c = await open()
    const error = await c.list('content', { signal: AbortSignal.abort() }).catch((e: unknown) => e)
    expect((error as Error).name).toBe('AbortError')
    expect(cms.requests).toHaveLength(0)
  })

  test('a listing given up between retries is not tried again', async () => {
    cms.hook = (_req, res) => {
      res.writeHead(503).end('busy')
      return true
    }
    // Long waits between tries: only the abort can end this listing early.
    const c = await open({ backoff: { baseMs: 20_000, capMs: 20_000 } })
    const cancel = new AbortController()
    const listing = c.list('content', { signal: cancel.signal }).catch((e: unknown) => e)
    await expect.poll(() => cms.requests.length).toBeGreaterThan(0)
    cancel.abort()
    const error = await listing
    expect((error as Error).name).toBe('AbortError')
    const tried = cms.requests.length
    expect(tried).toBeLessThanOrEqual(2)
    // Closing the client does not wait for a retry either.
    await c.close()
    client = undefined
    expect(cms.requests).toHaveLength(tried)
  })
})

describe('what goes on the wire', () => {
  test("a path is sent as given ('..' in an id is not resolved away), a text body with its length", async () => {
    cms.hook = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
      return true
    }
    const c = await open()
    await c.request('GET', '/api/demo/live/content/..')
    expect(cms.requests.at(-1)!.url).toBe('/api/demo/live/content/..')
    await c.request('POST', '/api/demo/live/content/x', { body: 'héllo', contentType: 'text/plain' })
    const post = cms.requests.at(-1)!
    expect(post.headers['content-length']).toBe(String(Buffer.byteLength('héllo')))
    expect(post.headers['transfer-encoding']).toBeUndefined()
    expect(post.body).toBe('héllo')
  })
})
