// A content file renamed by hand (`mv content/home.json content/start.json`) still says
// id "home". The item is not gone, so the server keeps it: the delete is held and the run
// says how to settle it, instead of deleting "home" while start.json cannot be pushed.

import { rename } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { syncedWorld, type World } from '../helpers/sync-world.js'

describe.each(['spec', 'upstream'] as const)('a file renamed by hand (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test('keeps the item on the server and names both files until the rename is undone', async () => {
    // Given a synced workspace
    world = await syncedWorld(dialect)
    expect(await world.server.get('content', 'home')).toBeDefined()
    // When the user renames a file without changing the id inside, and pushes
    await rename(world.file('content/home.json'), world.file('content/start.json'))
    const run = await world.cli('--json', 'push')
    // Then nothing is deleted on the server, and both files are explained
    expect(run.exitCode).toBe(1)
    expect(await world.server.get('content', 'home')).toBeDefined()
    const errors = Object.fromEntries(
      (run.json as { failed: Array<{ path: string; error: string }> }).failed.map((f) => [f.path, f.error]),
    )
    expect(errors['content/home.json']).toMatch(
      /not deleted on the server: content\/start.json still says id "home"/,
    )
    expect(errors['content/start.json']).toMatch(/does not match the file name/)
    // And renaming it back makes the workspace clean again
    await rename(world.file('content/start.json'), world.file('content/home.json'))
    expect((await world.cli('--json', 'status')).json).toMatchObject({ clean: true })
  })
})
