// .cms-sync/bases/: content-addressed base texts, checked on read, pruned of what no item names.

import { mkdtemp, readdir, readFile, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { BaseStore, LOOSE_LIMIT, packRecords } from '../../src/state/base-store.js'
import { emptyState, StateStore } from '../../src/state/state-file.js'
import { hashText } from '../../src/workspace/codec.js'

const target = { server: 'http://x', project: 'p', environment: 'e' }

test('a kept base reads back; a damaged one reads as missing and is replaced by the next keep', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'bases-'))
  const bases = new BaseStore(root)
  const text = '{\n  "id": "home"\n}\n'
  const hash = hashText(text)
  await bases.keep(hash, text)
  expect(await bases.read(hash)).toBe(text)
  // A crash cut the blob short.
  await writeFile(path.join(root, '.cms-sync/bases', hash), '{\n  "id": ')
  expect(await bases.read(hash)).toBeUndefined()
  await bases.keep(hash, text)
  expect(await bases.read(hash)).toBe(text)
  expect(await bases.read('0'.repeat(64))).toBeUndefined()
})

test('prune removes the blobs no item of the state names', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'bases-'))
  const bases = new BaseStore(root)
  const [a, b] = ['{"a":1}\n', '{"b":2}\n']
  await bases.keep(hashText(a), a)
  await bases.keep(hashText(b), b)
  const store = new StateStore(root, emptyState(target))
  await store.commit({
    kind: 'content',
    id: 'a',
    path: 'content/a.json',
    baseHash: hashText(a),
    remoteRev: 'r',
  })
  expect(await bases.prune(store)).toBe(1)
  expect(await readdir(path.join(root, '.cms-sync/bases'))).toEqual([hashText(a)])
})

/** `n` distinct base texts and their hashes. */
const texts = (n: number, tag = 'p') =>
  Array.from({ length: n }, (_, i) => {
    const text = `{\n  "id": "${tag}-${i}"\n}\n`
    return { text, hash: hashText(text) }
  })

test('beyond the first bases of a run, one pack: every base reads back in a later run', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'bases-'))
  const bases = new BaseStore(root)
  const all = texts(LOOSE_LIMIT + 100)
  // Kept the way a pull keeps them: many in flight at once.
  await Promise.all(all.map(({ hash, text }) => bases.keep(hash, text)))
  const names = await readdir(path.join(root, '.cms-sync/bases'))
  expect(names.filter((name) => name.startsWith('pack-'))).toHaveLength(1)
  expect(names).toHaveLength(LOOSE_LIMIT + 1)
  expect(bases.written).toBe(all.length)
  const later = new BaseStore(root)
  for (const { hash, text } of all) expect(await later.read(hash)).toBe(text)
  expect(await later.read(hashText('never kept'))).toBeUndefined()
})

test('a pack cut short by a crash: the bases before the cut read back, the cut one is missing', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'bases-'))
  const bases = new BaseStore(root)
  const all = texts(LOOSE_LIMIT + 3)
  for (const { hash, text } of all) await bases.keep(hash, text)
  const folder = path.join(root, '.cms-sync/bases')
  const pack = path.join(folder, (await readdir(folder)).find((name) => name.startsWith('pack-'))!)
  const bytes = await readFile(pack)
  expect(await packRecords(pack)).toHaveLength(3)
  await truncate(pack, bytes.length - 5)
  const later = new BaseStore(root)
  const [first, second, third] = all.slice(LOOSE_LIMIT)
  expect(await later.read(first!.hash)).toBe(first!.text)
  expect(await later.read(second!.hash)).toBe(second!.text)
  expect(await later.read(third!.hash)).toBeUndefined()
})

test('prune: a pack nothing refers to goes, one mostly unused is rewritten with what is used', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'bases-'))
  const folder = path.join(root, '.cms-sync/bases')
  const packsIn = async () => (await readdir(folder)).filter((name) => name.startsWith('pack-'))
  const store = new StateStore(root, emptyState(target))
  const commit = (hash: string, id: string) =>
    store.commit({ kind: 'content', id, path: `content/${id}.json`, baseHash: hash, remoteRev: 'r' })
  // Run 1: every base used.
  const first = new BaseStore(root)
  const one = texts(LOOSE_LIMIT + 10, 'one')
  for (const [i, { hash, text }] of one.entries()) {
    await first.keep(hash, text)
    await commit(hash, `a${i}`)
  }
  expect(await first.prune(store)).toBe(0)
  const [firstPack] = await packsIn()
  // Run 2: every item of run 1 moved on but two of its packed ones (its own pack, 8 of 10 used, stays).
  const second = new BaseStore(root)
  const two = texts(LOOSE_LIMIT + 10, 'two')
  for (const [i, { hash, text }] of two.entries()) {
    await second.keep(hash, text)
    if (i !== LOOSE_LIMIT && i !== LOOSE_LIMIT + 1) await commit(hash, `a${i}`)
  }
  expect(await second.prune(store)).toBe(LOOSE_LIMIT + 8)
  const packs = await packsIn()
  expect(packs).toHaveLength(2)
  expect(packs).not.toContain(firstPack)
  const later = new BaseStore(root)
  for (const [i, { hash, text }] of one.entries())
    expect(await later.read(hash)).toBe(i === LOOSE_LIMIT || i === LOOSE_LIMIT + 1 ? text : undefined)
  // Run 3: nothing of run 1's pack is used any more: it goes whole.
  await commit(two[LOOSE_LIMIT]!.hash, `a${LOOSE_LIMIT}`)
  await commit(two[LOOSE_LIMIT + 1]!.hash, `a${LOOSE_LIMIT + 1}`)
  const third = new BaseStore(root)
  const three = texts(LOOSE_LIMIT + 1, 'three')
  for (const [i, { hash, text }] of three.entries()) {
    await third.keep(hash, text)
    await commit(hash, `b${i}`)
  }
  expect(await third.prune(store)).toBe(2)
  expect(await packsIn()).toHaveLength(2)
})

test('a pack longer than the read window, texts shorter and longer than it: every base reads back', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'bases-'))
  const bases = new BaseStore(root)
  const sizes = [10, 3_000, 70_000, 5, 200_000, 64 * 1024 - 90, 1, 40_000]
  const all = [...texts(LOOSE_LIMIT), ...sizes.map((n, i) => ({ text: `${i}:${'é'.repeat(n)}` }))].map(
    ({ text }) => ({ text, hash: hashText(text) }),
  )
  for (const { hash, text } of all) await bases.keep(hash, text)
  const folder = path.join(root, '.cms-sync/bases')
  const pack = (await readdir(folder)).find((name) => name.startsWith('pack-'))!
  expect((await packRecords(path.join(folder, pack))).map((r) => r.hash)).toEqual(
    all.slice(LOOSE_LIMIT).map((entry) => entry.hash),
  )
  const later = new BaseStore(root)
  for (const { hash, text } of all) expect(await later.read(hash)).toBe(text)
})
