// .cms-sync/bases/: content-addressed base texts, checked on read, pruned of what no item names.

import { mkdtemp, readdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { BaseStore } from '../../src/state/base-store.js'
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
