import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
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

test("a save makes the workspace files and the state's records durable with one sync", async () => {
  // A `sync` first on PATH that logs each call and then does the real one.
  const bin = path.join(root, 'bin')
  await mkdir(bin)
  const log = path.join(root, 'sync-calls')
  await writeFile(path.join(bin, 'sync'), `#!/bin/sh\necho "$@" >> '${log}'\nexec /bin/sync "$@"\n`)
  await chmod(path.join(bin, 'sync'), 0o755)
  const was = process.env.PATH
  process.env.PATH = `${bin}:${was ?? ''}`
  try {
    const store = new StateStore(root, { version: 2, target, items: {} })
    let saves = 0
    const save = store.save.bind(store)
    store.save = () => {
      saves++
      return save()
    }
    for (let i = 0; i < 40; i++) {
      const file = path.join(root, `c${i}.json`)
      await writeFile(file, '{}')
      store.durability.note(file)
      await store.commit({ ...item, id: `c${i}`, path: `content/c${i}.json` })
    }
    await store.flush()
    // One sync per save, for the files and the buckets holding their records (a save of more
    // than four buckets made two before: the files, then the buckets), and all 40 are saved.
    const calls = (await readFile(log, 'utf8')).trim().split('\n')
    expect(saves).toBeGreaterThan(0)
    expect(calls).toEqual(Array.from({ length: saves }, () => `-f ${root}`))
    expect(store.durability.pending).toBe(0)
    const saved = await StateStore.open(root)
    expect(saved?.items().length).toBe(40)
  } finally {
    process.env.PATH = was
  }
})
