// The counts the guards read (StateStore as guards.ts BaseCounts), the items by kind and the
// size follow every change of the state: they replace a walk over every item on every run, so a count left behind would let a
// mass delete through or stop a single one.

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { type BaseCounts, countBase } from '../../src/engine/guards.js'
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
  expect(store.size).toBe(Object.keys(store.state.items).length)
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
