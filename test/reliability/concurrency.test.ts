// Concurrency: another client edits the server while cms-sync pushes, and files change while
// it pulls, at the worst moment (after the listing, before each item's write). Every item
// edited on both sides must end as a conflict with both versions kept: one in place, the
// other on the server until settled, then in .cms-sync/trash/.

import { writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { names } from '../../src/emulator/store.js'
import { contentFile } from '../helpers/fixtures.js'
import { startWorld, type World } from '../helpers/sync-world.js'
import { bytesUnder, report } from './support.js'

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

describe.each(['spec', 'upstream'] as const)('concurrency (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test('every double edit, made while cms-sync pushes or pulls, is a conflict with both versions kept', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `page-${i}`)
    world = await startWorld(dialect, { content: ids })
    const w = world
    expect((await w.cli('sync')).exitCode).toBe(0)
    const collection = names.env('demo', 'live', 'content')
    let serial = 0
    /** The other client, writing straight into the server's store (no request to wait for). */
    const remoteEdit = (id: string, title: string) => {
      const current = w.emulator.store.get<Record<string, unknown>>(collection, id)!
      const updateDate = new Date(Date.parse('2030-01-01T00:00:00Z') + ++serial * 1000).toISOString()
      w.emulator.store.put(collection, id, { ...current, properties: { title }, updateDate })
    }
    const localEdit = (id: string, title: string) =>
      writeFileSync(w.file(`content/${id}.json`), json(contentFile(id, { properties: { title } })))
    /** Runs `fire` once, when the first GET matching `route` arrives. */
    const onFirstRead = (pattern: RegExp, fire: () => void) => {
      let fired = false
      w.proxy.override = (method, route) => {
        if (!fired && method === 'GET' && pattern.test(route)) {
          fired = true
          fire()
        }
        return undefined
      }
    }
    const doubleEdits = new Map<string, { local: string; remote: string }>()
    const runs: Record<string, number> = {}

    // While pushing: every local edit is met by a remote edit of the same item.
    const pushed = ids.slice(0, 4)
    for (const id of pushed) localEdit(id, `local ${id}`)
    // After the listing, on the read that checks the first item before its write
    onFirstRead(/\/content\/[^/]+$/, () => {
      for (const id of pushed) remoteEdit(id, `remote ${id}`)
    })
    const push = await w.cli('--json', 'push')
    runs[`push exit ${push.exitCode}`] = 1
    for (const id of pushed) doubleEdits.set(id, { local: `local ${id}`, remote: `remote ${id}` })

    // While pulling: every remote edit is met by a local edit of the same item.
    const pulled = ids.slice(4)
    for (const id of pulled) remoteEdit(id, `remote ${id}`)
    // While the content listing is being answered (a pull of a full listing reads no item)
    onFirstRead(/\/content$/, () => {
      for (const id of pulled) localEdit(id, `local ${id}`)
    })
    const pull = await w.cli('--json', 'pull')
    runs[`pull exit ${pull.exitCode}`] = 1
    for (const id of pulled) doubleEdits.set(id, { local: `local ${id}`, remote: `remote ${id}` })
    w.proxy.override = undefined

    // Then both versions of every double edit still exist: the file and the server
    const title = async (id: string) =>
      (await w.readJson(`content/${id}.json`)).properties as { title: string }
    for (const [id, v] of doubleEdits) {
      expect((await title(id)).title, id).toBe(v.local)
      const remote = (await w.server.get('content', id)) as { properties: { title: string } } | undefined
      expect(remote?.properties.title, id).toBe(v.remote)
    }
    // And a sync reports each as a conflict, changing nothing
    const sync = await w.cli('--json', 'sync')
    expect(sync.exitCode).toBe(3)
    expect(sync.json.conflicts.map((c: { id: string }) => c.id).sort()).toEqual(
      [...doubleEdits.keys()].sort(),
    )
    // And settling them keeps the loser in the trash
    const settled = await w.cli('sync', '--prefer', 'remote')
    expect(settled.exitCode, settled.stderr).toBe(0)
    const trash = [...(await bytesUnder(path.join(w.root, '.cms-sync', 'trash')))].map(([, b]) =>
      b.toString(),
    )
    for (const [id, v] of doubleEdits) {
      expect((await title(id)).title).toBe(v.remote)
      expect(
        trash.some((text) => text.includes(v.local)),
        `${id}: local version in trash`,
      ).toBe(true)
    }
    expect(await readFile(w.file('content/page-0.json'), 'utf8')).toContain('remote page-0')
    report(`concurrency/${dialect}`, {
      doubleEdits: doubleEdits.size,
      runs,
      conflictsReported: sync.json.conflicts.length,
      versionsLost: 0,
    })
  })
})
