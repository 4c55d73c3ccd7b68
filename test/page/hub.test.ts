// The page's hub in a daemon nobody looks at: a watch event with no page open builds no page
// state (the daemon's numbers, the rate limit, the status), and a page that opens later still
// gets the state first.

import { createServer, get, type ServerResponse } from 'node:http'
import { afterEach, expect, test } from 'vitest'
import { createHub, type HubSource } from '../../src/page/hub.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

/** A source that counts how often the hub asked it for the daemon's state. */
function countingSource() {
  const asked = { daemon: 0 }
  const source: HubSource = {
    mode: 'watch',
    target: { server: 'http://127.0.0.1:1', project: 'demo', environment: 'live' },
    tokenSource: 'CMS_SYNC_TOKEN',
    rateLimit: () => ({ requestsPerSecond: 10, concurrency: 4, rateLimited: 0 }),
    readStatus: async () => {
      throw new Error('no status read in this test')
    },
    daemon: () => {
      asked.daemon++
      return undefined
    },
  }
  return { source, asked }
}

/** The first server-sent event a page opening `hub` receives. */
async function firstEvent(listen: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    listen(res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  cleanups.push(() => new Promise((resolve) => server.close(resolve)))
  const { port } = server.address() as { port: number }
  return new Promise((resolve, reject) => {
    get(`http://127.0.0.1:${port}/`, (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => {
        text += String(chunk)
        const end = text.indexOf('\n\n')
        if (end >= 0) {
          res.destroy()
          server.closeAllConnections()
          resolve(text.slice(0, end))
        }
      })
    }).on('error', reject)
  })
}

test('a quiet poll with no page open builds no page state; a page opened later gets it first', async () => {
  const { source, asked } = countingSource()
  const hub = createHub(source)
  hub.publish({ event: 'polled', files: 'events', moved: 0, listings: 'unchanged', planned: 'nothing' })
  hub.publish({ event: 'warning', message: 'something to say' })
  expect(asked.daemon).toBe(0)

  const event = await firstEvent((res) => hub.listen(res))
  expect(event.split('\n')[0]).toBe('event: state')
  expect(JSON.parse(event.split('\n')[1]!.slice('data: '.length))).toMatchObject({ mode: 'watch' })
  expect(asked.daemon).toBeGreaterThan(0)
})

/** A page kept open on `hub`: every state event it received so far, parsed. */
async function openPage(hub: ReturnType<typeof createHub>) {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    hub.listen(res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as { port: number }
  const states: Array<Record<string, unknown>> = []
  let text = ''
  const arrived: Array<() => void> = []
  await new Promise<void>((resolve, reject) => {
    get(`http://127.0.0.1:${port}/`, (res) => {
      res.on('data', (chunk: Buffer) => {
        text += String(chunk)
        for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
          const [head, data] = text.slice(0, end).split('\n')
          text = text.slice(end + 2)
          if (head === 'event: state') states.push(JSON.parse(data!.slice('data: '.length)))
        }
        for (const wake of arrived.splice(0)) wake()
        resolve()
      })
    }).on('error', reject)
  })
  cleanups.push(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  /** Resolves once a state event matching `test` has arrived. */
  const stateWhere = async (test: (state: Record<string, unknown>) => boolean) => {
    while (!states.some(test)) await new Promise<void>((resolve) => arrived.push(resolve))
  }
  return { states, stateWhere }
}

test('a page opened later does not leave a page already open with an older state', async () => {
  const { source } = countingSource()
  let rateLimited = 0
  source.rateLimit = () => ({ requestsPerSecond: 10, concurrency: 4, rateLimited })
  const hub = createHub(source)
  cleanups.push(async () => hub.close())
  const limited = (count: number) => (state: Record<string, unknown>) =>
    (state.rateLimit as { rateLimited?: number } | undefined)?.rateLimited === count
  const first = await openPage(hub)
  await first.stateWhere(limited(0))
  // The server answered 429 once; no event told the pages yet when a second page opens.
  rateLimited = 1
  const second = await openPage(hub)
  await second.stateWhere(limited(1))
  await first.stateWhere(limited(1))
  expect(first.states.at(-1)).toEqual(second.states.at(-1))
})
