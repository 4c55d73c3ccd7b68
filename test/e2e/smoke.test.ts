import { afterEach, describe, expect, test } from 'vitest'
import { startWorld, type World } from '../helpers/sync-world.js'

describe.each(['spec', 'upstream'] as const)('smoke (%s)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test('first sync pulls, second is clean', async () => {
    world = await startWorld(dialect)
    const first = await world.cli('--json', 'sync')
    expect(first.stderr).toBe('')
    expect(first.exitCode).toBe(0)
    console.log(first.stdout)
    const status = await world.cli('--json', 'status')
    console.log(status.stdout, status.stderr)
    expect(status.json.clean).toBe(true)
  })
})
