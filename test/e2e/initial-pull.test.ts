// An initial pull into an empty folder records, per item, the server's revision as the item's
// base: the pull takes a listed item's revision from the snapshot instead of working it out a
// second time, and what it records must be what a read of the item says, or the next run would
// see every item as changed on the server.

import { afterEach, describe, expect, test } from 'vitest'
import { StateStore } from '../../src/state/state-file.js'
import { contentCodec } from '../../src/workspace/content-codec.js'
import { schemaCodec } from '../../src/workspace/schema-codec.js'
import { startWorld, type World } from '../helpers/sync-world.js'

describe.each(['spec', 'upstream'] as const)('initial pull (%s server)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test("records each item's revision as a read of it says, and the next status is clean", async () => {
    world = await startWorld(dialect)
    const pulled = await world.cli('--json', 'pull')
    expect(pulled.exitCode).toBe(0)
    const paths = pulled.json.applied.map((a: { path: string }) => a.path)
    expect(paths).toEqual(expect.arrayContaining(['content/home.json', 'schemas/section.json']))
    const store = await StateStore.open(world.root)
    const records = store!
      .items()
      .flatMap((item) =>
        item.kind === 'content' || item.kind === 'schema' ? [{ ...item, kind: item.kind }] : [],
      )
    expect(records.length).toBe(paths.length)
    for (const record of records) {
      const codec = record.kind === 'content' ? contentCodec : schemaCodec
      const read = await world.server.get(record.kind, record.id)
      expect(record.remoteRev, record.path).toBe(codec.revisionOf(read!))
    }
    const status = await world.cli('--json', 'status')
    expect(status.exitCode).toBe(0)
    expect(status.json.clean).toBe(true)
  })
})
