import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { writeFileAtomically } from '../../src/util/atomic-write.js'
import { decideMassChange } from '../../src/watch/mass-change.js'
import { createOwnWrites, hashOfBytes } from '../../src/watch/own-writes.js'
import { recordBatches, tempWorkspace, waitFor } from './helpers.js'

const home = '{\n  "title": "Home"\n}\n'

/** A watched workspace where cms-sync has just announced and written `pulled` over content/home.json. */
async function afterOwnWrite(pulled: string) {
  const root = await tempWorkspace({ 'content/home.json': home })
  const own = createOwnWrites(root)
  const rec = await recordBatches(root)
  own.expect('content/home.json', hashOfBytes(pulled)) // announced before the write
  await writeFileAtomically(path.join(root, 'content/home.json'), pulled)
  return { root, own, rec }
}

describe('own writes', () => {
  test('our write is dropped from the batch the watcher delivers', async () => {
    const { own, rec } = await afterOwnWrite('{\n  "title": "From the server"\n}\n')
    await waitFor(() => rec.seen().has('content/home.json'))
    expect(await own.filterBatch(rec.seen())).toEqual(new Set())
  })

  test('a user edit right after our write is still delivered', async () => {
    const { root, own, rec } = await afterOwnWrite('{\n  "title": "From the server"\n}\n')
    await writeFile(path.join(root, 'content/home.json'), '{"title":"typed by a person"}\n')
    await waitFor(() => rec.seen().has('content/home.json'))
    expect(await own.filterBatch(rec.seen())).toEqual(new Set(['content/home.json']))
  })

  test('a user edit in a later batch, after ours was dropped, is delivered', async () => {
    const { root, own, rec } = await afterOwnWrite('{"v":1}\n')
    await waitFor(() => rec.batches.length === 1)
    expect(await own.filterBatch(rec.batches[0]!.paths)).toEqual(new Set())
    await writeFile(path.join(root, 'content/home.json'), '{"v":2}\n')
    await waitFor(() => rec.batches.length === 2)
    expect(await own.filterBatch(rec.batches[1]!.paths)).toEqual(new Set(['content/home.json']))
  })

  test('our delete is dropped; a file recreated by the user is not', async () => {
    const root = await tempWorkspace({ 'content/home.json': home, 'content/about.json': home })
    const own = createOwnWrites(root)
    own.expect('content/home.json', 'deleted')
    own.expect('content/about.json', 'deleted')
    await rm(path.join(root, 'content/home.json'))
    // about.json: the user recreated it, or our delete never happened
    expect(await own.filterBatch(['content/home.json', 'content/about.json', 'content/other.json'])).toEqual(
      new Set(['content/about.json', 'content/other.json']),
    )
  })

  test('announcements expire, and the latest one for a path wins', async () => {
    let clock = 1_000
    const root = await tempWorkspace({ 'content/home.json': home })
    const own = createOwnWrites(root, { ttlMs: 5_000, now: () => clock })
    own.expect('content/home.json', hashOfBytes('old'))
    own.expect('content/home.json', hashOfBytes(home))
    expect(await own.filterBatch(['content/home.json'])).toEqual(new Set())
    expect(own.size).toBe(1)
    clock += 5_000
    expect(own.size).toBe(0)
    expect(await own.filterBatch(['content/home.json'])).toEqual(new Set(['content/home.json']))
  })

  test('a path that cannot be read as a file is left to the engine', async () => {
    const root = await tempWorkspace({ 'media/photos/a.png': 'a' })
    const own = createOwnWrites(root)
    own.expect('media/photos', hashOfBytes('x'))
    expect(await own.filterBatch(['media/photos'])).toEqual(new Set(['media/photos']))
  })

  test("a large pull's own writes do not reach the mass change guard", async () => {
    const root = await tempWorkspace({ 'content/home.json': home })
    const own = createOwnWrites(root)
    const rec = await recordBatches(root)
    const names = Array.from({ length: 300 }, (_, i) => `content/pulled-${i}.json`)
    await Promise.all(
      names.map(async (name) => {
        const text = `{"n":"${name}"}\n`
        own.expect(name, hashOfBytes(text))
        await writeFileAtomically(path.join(root, name), text)
      }),
    )
    await writeFile(path.join(root, 'content/home.json'), '{"edited":"meanwhile"}\n')
    await waitFor(() => rec.seen().size === 301, { what: 'every path' })
    const changed = await own.filterBatch(rec.seen())
    expect(changed).toEqual(new Set(['content/home.json']))
    expect(decideMassChange({ changed: changed.size, deleted: 0, tracked: 1 }).pause).toBe(false)
  })
})
