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
