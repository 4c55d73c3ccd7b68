// What a failed listing says. Upstream fails a listing of more than 101 documents with a 404
// "Cannot use a session that has ended", and answers many failures with 400: the message must
// say that nothing was changed and what to check, never "fix the item" (there is no item).

import { afterEach, describe, expect, test } from 'vitest'
import { syncedWorld, type World } from '../helpers/sync-world.js'

describe.each(['spec', 'upstream'] as const)('a failed listing (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test.each([
    [404, 'Cannot use a session that has ended'],
    [400, 'Something about the request'],
    [500, 'connection destroyed'],
  ])('answered %i: a safety stop that names the listing, not an item', async (status, body) => {
    world = await syncedWorld(dialect)
    const w = world
    await w.editJson('content/home.json', { properties: { title: 'local' } })
    w.proxy.override = (method, route) =>
      method === 'GET' && route.endsWith('/content') ? { status, body } : undefined
    for (const command of ['status', 'push']) {
      const run = await w.cli(command)
      expect(run.exitCode, run.stderr).toBe(4)
      expect(run.stderr).toMatch(/could not list content, so nothing was changed/)
      expect(run.stderr).toContain(body)
      expect(run.stderr).not.toMatch(/fix the item|and the id/)
      expect(run.stderr).toMatch(/try again/)
    }
  })
})
