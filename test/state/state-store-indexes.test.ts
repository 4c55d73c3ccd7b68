// What the StateStore keeps beside the items follows every change of the state: the counts the
// guards read (guards.ts BaseCounts), the items by kind, the size, and the lock's lines. They
// replace a walk over every item on every run or save, they replace a walk over every item on every run, so a count left behind would let a
// mass delete through or stop a single one.

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { type BaseCounts, countBase } from '../../src/engine/guards.js'
import { lockText } from '../../src/state/committed-base.js'
import { emptyState, type ItemState, StateStore } from '../../src/state/state-file.js'
import { KINDS } from '../../src/workspace/kinds.js'

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

const item = (kind: ItemState['kind'], id: string, inherited = false): ItemState => ({
  kind,
  id,
  path: `${kind}/${id}.json`,
  baseHash: 'a'.repeat(64),
  remoteRev: 'r1',
  ...(inherited ? { inherited: true as const } : {}),
})

function sameCounts(store: StateStore, paths: string[]): void {
  const fresh: BaseCounts = countBase(store.items())
  for (const kind of KINDS) {
    expect(store.countOf(kind), kind).toBe(fresh.countOf(kind))
    expect(store.items(kind)).toEqual(store.items().filter((it) => it.kind === kind))
  }
  expect(store.size).toBe(store.items().length)
  expect(store.inheritedCount).toBe(fresh.inheritedCount)
  for (const p of paths) expect(store.isInherited(p), p).toBe(fresh.isInherited(p))
}

test('counts and the by-kind index taken at load follow commit, adopt and forget, an item turning inherited and back included', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'cms-sync-counts-'))
  dirs.push(root)
  const state = emptyState({ server: 'http://x', project: 'demo', environment: 'live' })
  for (const it of [item('content', 'a'), item('content', 'b', true), item('schema', 's')])
    state.items[it.path] = it
  // A batch no test reaches: the counts, not the saves, are what is checked here.
  const store = new StateStore(root, state, { items: 1_000_000, ms: 1_000_000_000 })
  const paths = ['content/a.json', 'content/b.json', 'content/c.json', 'schema/s.json']
  sameCounts(store, paths)
  expect(store.countOf('content')).toBe(2)
  expect(store.inheritedCount).toBe(1)

  await store.commit(item('content', 'c'))
  sameCounts(store, paths)
  await store.commit(item('content', 'a', true))
  sameCounts(store, paths)
  expect(store.inheritedCount).toBe(2)
  store.adopt(item('content', 'b'))
  sameCounts(store, paths)
  expect(store.isInherited('content/b.json')).toBe(false)
  await store.forget('content/a.json')
  await store.forget('content/a.json')
  await store.forget('schema/s.json')
  sameCounts(store, paths)
  expect(store.countOf('content')).toBe(2)
  expect(store.countOf('schema')).toBe(0)
  expect(store.inheritedCount).toBe(0)
})

test("the lock's text, made again from the lines of changed items only, is the text made from every item", async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'cms-sync-lock-lines-'))
  dirs.push(root)
  const state = emptyState({ server: 'http://x', project: 'demo', environment: 'live' })
  for (const id of ['m', 'b', 'z', 'a']) state.items[`content/${id}.json`] = item('content', id)
  const store = new StateStore(root, state, { items: 1_000_000, ms: 1_000_000_000 })
  // What the lock held before: the state's items, an alternate's line in its place, none for null.
  const expected = () => {
    const items: ItemState[] = []
    for (const it of store.items()) {
      const alternate = store.alternates.get(it.path)
      if (alternate === undefined) items.push(it)
      else if (alternate !== null) items.push(alternate)
    }
    return lockText(store.target, items)
  }
  expect(store.lockText()).toBe(expected())
  store.alternates.set('content/b.json', { ...item('content', 'b'), remoteRev: 'from-the-lock' })
  store.alternates.set('content/z.json', null)
  expect(store.lockText()).toBe(expected())
  expect(store.lockText()).toContain('from-the-lock')
  await store.commit({ ...item('content', 'm'), remoteRev: 'r2' })
  expect(store.lockText()).toBe(expected())
  expect(store.lockText()).toContain('"rev":"r2"')
  await store.commit(item('content', 'c'))
  await store.commit({ ...item('content', 'b'), baseHash: 'b'.repeat(64) })
  expect(store.lockText()).toBe(expected())
  await store.forget('content/a.json')
  store.adopt({ ...item('content', 'z', true) })
  expect(store.lockText()).toBe(expected())
  expect(store.lockText()).not.toContain('content/a.json')
})
