// The watch daemon's state held as text (compact-store.ts): the same answers and, above all,
// the same file as the object form, byte for byte.

import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { CompactStateStore } from '../../src/state/compact-store.js'
import {
  type ItemState,
  loadState,
  type StateFile,
  StateStore,
  statePath,
} from '../../src/state/state-file.js'

let root: string
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'cms-sync-compact-'))
})
afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

const target = { server: 'http://localhost:1', project: 'demo', environment: 'live' }

function content(id: string, extra: Partial<ItemState> = {}): ItemState {
  return {
    kind: 'content',
    id,
    path: `content/${id}.json`,
    baseHash: `${id}-hash`.padEnd(64, '0'),
    remoteRev: '2026-11-22T08:30:27.635Z',
    stat: { size: 631, mtimeMs: 1795336230465.4292, ino: 4915192 },
    createDate: '2026-11-22T08:30:27.635Z',
    ...extra,
  }
}

const media: ItemState = {
  kind: 'media',
  id: '005455162ced13a5',
  path: 'media/folder 3/ümage "1".bin',
  baseHash: 'c'.repeat(64),
  remoteRev: '2026-11-22T08:30:28.415Z',
  media: { sha256: 'c'.repeat(64), name: 'ümage "1".bin', folder: 'folder 3' },
}

function saved(): StateFile {
  return {
    version: 2,
    target,
    items: {
      'content/home.json': content('home'),
      'content/news.json': content('news', { inherited: true }),
      [media.path]: media,
      'schemas/page.json': {
        kind: 'schema',
        id: 'page',
        path: 'schemas/page.json',
        baseHash: 'a',
        remoteRev: 'b',
      },
    },
  }
}

/** The same changes through either store; returns the file each one wrote. */
async function afterChanges(
  make: (state: StateFile) => StateStore,
  between: (store: StateStore) => void = () => {},
): Promise<string> {
  const store = make(saved())
  await store.commit(content('news', { baseHash: 'changed' }))
  between(store)
  await store.forget('content/home.json')
  await store.commit(content('home', { createDate: null }))
  between(store)
  await store.commit(content('fresh'))
  await store.save()
  return readFile(statePath(root), 'utf8')
}

test('the file is byte for byte what the object form writes', async () => {
  const objects = await afterChanges((state) => new StateStore(root, state))
  const compact = await afterChanges((state) => new CompactStateStore(root, state))
  expect(compact).toBe(objects)
  // Packed and expanded again on the way, as full runs do.
  const cycled = await afterChanges(
    (state) => new CompactStateStore(root, state),
    (store) => {
      ;(store as CompactStateStore).compact()
      ;(store as CompactStateStore).expand()
    },
  )
  expect(cycled).toBe(objects)
  expect(Object.keys((await loadState(root))!.items)).toEqual([
    'content/news.json',
    media.path,
    'schemas/page.json',
    'content/home.json',
    'content/fresh.json',
  ])
})

test('reads answer as the object form does, one kind at a time if asked', async () => {
  const objects = new StateStore(root, saved())
  const compact = new CompactStateStore(root, saved())
  compact.compact()
  expect(compact.get('content/news.json')).toEqual(objects.get('content/news.json'))
  expect(compact.get('content/gone.json')).toBeUndefined()
  expect(compact.items()).toEqual(objects.items())
  expect(compact.items('media')).toEqual([media])
  expect([...compact.summaries()]).toEqual(
    [...objects.summaries()].map(({ path, kind, inherited }) => ({
      path,
      kind,
      ...(inherited ? { inherited } : {}),
    })),
  )
  expect(compact.size).toBe(4)
  // A read is a copy: changing it changes nothing held.
  compact.get('content/news.json')!.baseHash = 'scribbled'
  expect(compact.get('content/news.json')!.baseHash).toBe(content('news').baseHash)
})

test('expanded, a read item stays one object until the store is compacted', () => {
  const store = new CompactStateStore(root, saved())
  store.compact()
  store.expand()
  const read = store.get('content/home.json')
  expect(store.get('content/home.json')).toBe(read)
  expect(store.items('content')).toContain(read)
  store.compact()
  expect(store.get('content/home.json')).not.toBe(read)
  expect(store.get('content/home.json')).toEqual(read)
})
