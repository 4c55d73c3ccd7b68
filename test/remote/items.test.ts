// One item at a time (src/remote/items.ts), in both dialects against the emulator over real
// HTTP: reads that never make upstream ask its parent for an id neither has, inherited items
// pulled into the project, deletes of what is gone, and a write whose answer was lost settled
// by reading the item again instead of sending it blindly again.

import { afterEach, describe, expect, test } from 'vitest'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import type { RemoteClient, RemoteClientOptions } from '../../src/remote/index.js'
import { type CountingProxy, startCountingProxy } from '../helpers/counting-proxy.js'
import { demoClient, page } from '../helpers/demo-client.js'

const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close()
})

async function emulator(dialect: 'spec' | 'upstream'): Promise<{ em: Emulator; proxy: CountingProxy }> {
  const em = await startEmulator({ dialect })
  open.push(em)
  const proxy = await startCountingProxy(em.url)
  open.push(proxy)
  return { em, proxy }
}

async function clientOf(
  em: Emulator,
  url: string,
  extra: Partial<RemoteClientOptions> = {},
): Promise<RemoteClient> {
  const client = await demoClient(url, em.token(), extra)
  open.push(client)
  return client
}

/** A child project (behind a counting proxy) that inherits from a parent holding `inherited`. */
async function family(dialect: 'spec' | 'upstream') {
  const parentEm = await startEmulator({ dialect })
  open.push(parentEm)
  const parent = await clientOf(parentEm, parentEm.url)
  await parent.put('content', 'inherited', page('inherited', 'From the parent'))
  const { em, proxy } = await emulator(dialect)
  const child = await clientOf(em, proxy.url)
  const link = await child.request('POST', '/api/demo/settings/sync', {
    body: { enabled: true, url: parentEm.url, token: parentEm.token(), project: 'demo' },
  })
  expect(link.status).toBe(200)
  return { child, proxy }
}

describe.each(['spec', 'upstream'] as const)('%s dialect', (dialect) => {
  test('an id the listing lacks is read by id only where the server does not forward it to its parent', async () => {
    const { child, proxy } = await family(dialect)
    expect((await child.list('content')).map((item) => item.id)).toEqual(['inherited'])
    const before = proxy.seen.length
    expect(await child.get('content', 'nobody')).toBeUndefined()
    const asked = proxy.seen.slice(before)
    // Upstream turns its own sync off when the parent lacks a forwarded id (§9): a fresh listing
    // answers instead. Spec answers a by-id read of its own.
    if (child.capabilities.items.byIdMissAsksParent) {
      expect(asked).toEqual(['GET /api/demo/live/content'])
    } else {
      expect(asked).toEqual(['GET /api/demo/live/content/nobody'])
    }
    // The inheritance still stands: the parent's item is still listed and read.
    expect((await child.list('content')).map((item) => item.id)).toEqual(['inherited'])
    expect(await child.get('content', 'inherited')).toMatchObject({
      properties: { title: 'From the parent' },
    })
  })

  test('pullInherited makes a local copy of an inherited item; of an id nobody has, it fails with the item named', async () => {
    const { child } = await family(dialect)
    await child.pullInherited('content', 'inherited')
    const [local] = await child.list('content')
    expect(local).toMatchObject({ id: 'inherited', isLocked: false })
    await expect(child.pullInherited('content', 'nobody')).rejects.toThrow(/"nobody"/)
  })

  test('an unknown form reads as absent, and deleting what is gone counts as done', async () => {
    const { em, proxy } = await emulator(dialect)
    const client = await clientOf(em, proxy.url)
    // Upstream answers an unknown form id with an empty form (§12.18).
    expect(await client.get('form', 'nobody')).toBeUndefined()
    expect(await client.formEntries('nobody')).toBeUndefined()
    await client.remove('content', 'nobody')
    await client.remove('form', 'nobody')
  })

  test('a write whose answer was a 5xx is read back: sent again when it had not landed', async () => {
    const { em, proxy } = await emulator(dialect)
    const client = await clientOf(em, proxy.url)
    let failed = 0
    // The first write never reaches the server and is answered 500.
    proxy.override = (method) =>
      method === 'POST' && failed++ === 0 ? { status: 500, body: 'oops' } : undefined
    const stored = await client.put('content', 'home', page('home', 'Home'), {
      expected: (current) => current === undefined,
    })
    expect(stored).toMatchObject({ id: 'home', properties: { title: 'Home' } })
    expect(proxy.seen.filter((line) => line.startsWith('POST'))).toHaveLength(2)
  })

  test('a write that landed though its answer was lost is not sent again', async () => {
    const { em, proxy } = await emulator(dialect)
    const client = await clientOf(em, proxy.url, { timeoutMs: 300 })
    // The server acts on the write; its answer never reaches the client.
    proxy.hold = (method) => method === 'POST'
    const stored = await client.put('content', 'home', page('home', 'Home'))
    proxy.hold = undefined
    expect(stored).toMatchObject({ id: 'home', properties: { title: 'Home' } })
    expect(proxy.seen.filter((line) => line.startsWith('POST'))).toHaveLength(1)
  })

  test('a write whose answer was lost while someone else changed the item is a conflict, not an overwrite', async () => {
    const { em, proxy } = await emulator(dialect)
    const client = await clientOf(em, proxy.url)
    const other = await clientOf(em, em.url)
    await client.put('content', 'home', page('home', 'Home'))
    proxy.override = (method) => (method === 'POST' ? { status: 502, body: 'bad gateway' } : undefined)
    // Another user edits the item after this client planned its write against 'Home'.
    await other.put('content', 'home', page('home', 'Their edit'))
    const plannedAgainst = (current: Record<string, unknown> | undefined) =>
      (current?.properties as { title?: string } | undefined)?.title === 'Home'
    const error = await client
      .put('content', 'home', page('home', 'Mine'), { expected: plannedAgainst })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'conflict', itemId: 'home' })
    expect(await other.get('content', 'home')).toMatchObject({ properties: { title: 'Their edit' } })
  })
})
