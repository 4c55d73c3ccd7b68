// A listing's body is read item by item as it arrives (src/remote/array-items.ts), never as one
// string. Against a real server that sends it in pieces: every way a body can be cut gives the
// same items, and a body that is not one JSON array of items with string ids is refused with the
// words (and the exit code, a safety stop) of a listing parsed whole.

import type { ServerResponse } from 'node:http'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { ArrayItems } from '../../src/remote/array-items.js'
import type { RemoteClient } from '../../src/remote/index.js'
import { type MiniCms, miniCmsClient, startMiniCms } from '../helpers/mini-cms.js'

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
  client = await miniCmsClient(cms, { backoff: { baseMs: 5, capMs: 20 }, maxRetries: 1, ...extra })
  return client
}

/** Answers the content listing with `pieces`, each sent as its own chunk (no declared length). */
function sendInPieces(pieces: string[], then?: (res: ServerResponse) => void): void {
  cms.hook = (req, res) => {
    if (!req.url?.startsWith('/api/demo/live/content')) return false
    res.writeHead(200, { 'content-type': 'application/json' })
    for (const piece of pieces) res.write(piece)
    if (then) then(res)
    else res.end()
    return true
  }
}

const ITEMS = [
  { id: 'a', properties: { title: 'a "quoted" [bracket], {brace}, comma, \\ backslash' } },
  { id: 'b', properties: { title: 'ünïcödé ✓ 日本語', list: [1, [2, { x: '}' }]] } },
  { id: 'c', nested: { deep: { deeper: [] } }, empty: {}, n: -1.5e3, t: true, f: false, z: null },
]

describe('items split from the bytes', () => {
  test('a body cut at every byte gives the items JSON.parse gives', () => {
    const body = Buffer.from(` \n[ ${ITEMS.map((item) => JSON.stringify(item, null, 1)).join(' ,\n')} ]\n`)
    for (let cut = 0; cut <= body.length; cut++) {
      const seen: unknown[] = []
      const split = new ArrayItems((item) => seen.push(item))
      split.push(body.subarray(0, cut))
      split.push(body.subarray(cut))
      expect(split.end(), `cut at ${cut}`).toBe(true)
      expect(seen, `cut at ${cut}`).toEqual(ITEMS)
    }
  })

  test('only one whole JSON array is accepted', () => {
    const accepted = (text: string) => {
      const split = new ArrayItems(() => {})
      for (const byte of Buffer.from(text)) split.push(Buffer.from([byte]))
      return split.end()
    }
    for (const text of ['[]', ' [ ] ', '[1]', '[{"a":[1,2]},"x"]']) expect(accepted(text), text).toBe(true)
    for (const text of [
      '',
      '{}',
      '[',
      '[1',
      '[1,]',
      '[,1]',
      '[,]',
      '[1 2]',
      '[1]]',
      '[1] x',
      '[{]}',
      '[}]',
      'OK',
    ])
      expect(accepted(text), text).toBe(false)
  })
})

describe('a streamed listing', () => {
  test('arrives in pieces and is listed whole', async () => {
    const text = JSON.stringify(ITEMS)
    sendInPieces([text.slice(0, 7), text.slice(7, 50), text.slice(50, 51), text.slice(51)])
    const c = await open()
    expect(await c.list('content')).toEqual(ITEMS)
  })

  test('`take` keeps what the caller wants of each item, in order', async () => {
    sendInPieces([JSON.stringify(ITEMS)])
    const c = await open()
    const read = await c.listing('content', { take: (item) => String(item.id).toUpperCase() })
    expect(read.items()).toEqual(['A', 'B', 'C'])
  })

  test('a connection cut mid-body is read again from the start: no item twice', async () => {
    const text = JSON.stringify(ITEMS)
    let first = true
    cms.hook = (req, res) => {
      if (!req.url?.startsWith('/api/demo/live/content')) return false
      res.writeHead(200, { 'content-type': 'application/json' })
      if (first) {
        first = false
        res.write(text.slice(0, 60))
        res.socket?.destroy()
        return true
      }
      res.end(text)
      return true
    }
    const c = await open()
    expect(await c.list('content')).toEqual(ITEMS)
    expect(cms.requests.filter((r) => r.url === '/api/demo/live/content')).toHaveLength(2)
  })

  const refusals: Array<[string, string[], RegExp]> = [
    [
      'a body that ends mid-item',
      ['[{"id":"a"},', '{"id":"b","title":"cut'],
      /the content listing is not a JSON array/,
    ],
    [
      'a body that ends before its closing bracket',
      ['[{"id":"a"},', '{"id":"b"}'],
      /the content listing is not a JSON array/,
    ],
    [
      'invalid JSON mid-stream',
      ['[{"id":"a"},', '{"id":"b",}', ',{"id":"c"}]'],
      /the content listing is not a JSON array/,
    ],
    [
      'an item that is not an object',
      ['[{"id":"a"},', '3,{"id":"c"}]'],
      /item 1 of the content listing has no string id/,
    ],
    [
      'an item without a string id',
      ['[{"id":"a"},{"id":', '7}]'],
      /item 1 of the content listing has no string id/,
    ],
    ['an id listed twice', ['[{"id":"a"},', '{"id":"a"}]'], /the content listing holds the id "a" twice/],
    ['a wrapped object', ['{"items":', '[{"id":"a"}]}'], /the content listing is not a JSON array/],
    [
      'a bad item and then bad JSON: the JSON is said first',
      ['[3,', '{]'],
      /the content listing is not a JSON array/,
    ],
  ]
  test.each(refusals)(
    '%s is a safety stop with the words of a whole parse',
    async (_name, pieces, message) => {
      sendInPieces(pieces)
      const c = await open()
      const error = await c.list('content').catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'listing', name: 'ListingError', exitCode: 4 })
      expect((error as Error).message).toMatch(message)
    },
  )

  test('a body that passes the cap as it streams is cut off, and says so', async () => {
    const piece = `${JSON.stringify({ id: 'x', pad: 'y'.repeat(10_000) })},`
    let sent = 0
    sendInPieces([], (res) => {
      res.write('[')
      const more = () => {
        // Written as the client reads, until it hangs up.
        while (sent < 2_000_000 && res.write(piece)) sent += piece.length
        if (sent < 2_000_000 && !res.destroyed) res.once('drain', more)
        else res.end(']')
      }
      res.on('close', () => {
        sent = Number.POSITIVE_INFINITY
      })
      more()
    })
    const c = await open({ listMaxBytes: 100_000 })
    const error = await c.list('content').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'listing', exitCode: 4 })
    expect((error as Error).message).toMatch(/larger than 0 MB.*raise limits\.listingMB/)
  })
})
