// Listings answer conditional GETs in both dialects, as the real server (Express) does: a weak
// ETag on every 200, 304 without a body when If-None-Match names it, a new ETag after a change.

import { describe, expect, test } from 'vitest'
import { weakEtag } from '../../src/emulator/etag.js'
import { client, DIALECTS, login, start } from './helpers.js'

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
