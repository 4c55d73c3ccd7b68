import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { loadState, StateStore, statePath } from '../../src/state/state-file.js'
import { Durability } from '../../src/workspace/durability.js'

let root: string
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'cms-sync-durability-'))
})
afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

const target = { server: 'http://x', project: 'p', environment: 'e' }
const item = { kind: 'content' as const, id: 'a', path: 'content/a.json', baseHash: 'h', remoteRev: 'r' }

test('the state is written only after the files it records are flushed', async () => {
  const store = new StateStore(root, { version: 2, target, items: {} })
  const onDiskAtFlush: string[] = []
  // Watch the flush a save makes: what the state file said at that moment.
  const flush = store.durability.flush.bind(store.durability)
  store.durability.flush = async () => {
    onDiskAtFlush.push(await readFile(statePath(root), 'utf8').catch(() => 'none'))
    await flush()
  }
  await store.commit(item)
  await store.flush()
  // When the flush ran, the state on disk did not record the item yet; afterwards it does.
  expect(onDiskAtFlush).toEqual(['none'])
  expect((await loadState(root))?.items['content/a.json']?.baseHash).toBe('h')
})

test('a failed flush saves no state that would vouch for the files', async () => {
  const store = new StateStore(root, { version: 2, target, items: {} })
  store.durability.flush = async () => {
    throw new Error('disk full')
  }
  await store.commit(item).catch(() => {})
  await expect(store.flush()).rejects.toThrow('disk full')
  await expect(readFile(statePath(root), 'utf8')).rejects.toThrow(/ENOENT/)
})

test('a flush covers what was noted, also when the file system call cannot be used', async () => {
  const durability = new Durability(root)
  await writeFile(path.join(root, 'a.json'), '{}')
  durability.note(path.join(root, 'a.json'))
  durability.note(path.join(root, 'gone.json')) // deleted since: nothing to flush, no error
  expect(durability.pending).toBe(2)
  await durability.flush()
  expect(durability.pending).toBe(0)
  // A workspace on a path `sync -f` cannot open falls back to an fsync per noted file.
  const elsewhere = new Durability(path.join(root, 'no-such-folder'))
  elsewhere.note(path.join(root, 'a.json'))
  await elsewhere.flush()
  expect(elsewhere.pending).toBe(0)
})
