// The merges of a plan (src/engine/merges.ts) where a user chooses: resolve --keep on single
// leaves (a leaf, a subtree, never a sibling that shares a prefix), a per-leaf choice on an item
// that cannot be merged, and a base text found outside the state (a fresh clone's git history).

import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, test } from 'vitest'
import type { Side } from '../../src/engine/plan.js'
import { applyRun, planRun, SELECT } from '../../src/engine/plan-and-apply.js'
import { engineOver, RUN_OPTIONS } from '../helpers/engine-world.js'
import { contentOf } from '../helpers/fixtures.js'
import type { MemoryRemote } from '../helpers/memory-remote.js'

const properties = { title: { _multilingual: true, en: 'Home', de: 'Start' }, body: 'Welcome', bodyNote: 'n' }
const page = contentOf('home', { properties })
const PATH = 'content/home.json'

/**
 * A synced page, then edits of the same leaves to different values on both sides: the German
 * title and the body. `baseText` is the file as synced (what the state's base holds).
 */
async function conflicted() {
  const { root, remote, deps } = await engineOver('merge-choices')
  remote.seed('content', page)
  expect(
    (await applyRun(deps, await planRun(deps, {}), { ...RUN_OPTIONS, select: SELECT.sync })).failed,
  ).toEqual([])
  const file = path.join(root, PATH)
  const baseText = await readFile(file, 'utf8')
  const local = JSON.parse(baseText)
  local.properties.title.de = 'Startseite'
  local.properties.body = 'Local body'
  await writeFile(file, JSON.stringify(local))
  remote.seed('content', {
    ...page,
    properties: { ...properties, title: { ...properties.title, de: 'Anfang' }, body: 'Remote body' },
  })
  const planItem = async (
    opts: { prefer?: Side; leaves?: ReadonlyMap<string, readonly string[]> },
    d = deps,
  ) => (await planRun(d, opts)).plan.items.find((item) => item.path === PATH)!
  const dropBases = () => rm(path.join(root, '.cms-sync/bases'), { recursive: true })
  return { deps, baseText, planItem, dropBases }
}

const leafPaths = (leaves: { path: string }[] | undefined) => leaves?.map((leaf) => leaf.path)

test('without a choice both conflicting leaves are named and nothing is settled', async () => {
  const { planItem } = await conflicted()
  const item = await planItem({})
  expect(item).toMatchObject({ action: 'conflict', local: 'modified', remote: 'modified' })
  expect(item.settledFor).toBeUndefined()
  expect(leafPaths(item.leaves)).toEqual(['/properties/body', '/properties/title/de'])
})

test('resolve --keep on one leaf settles that leaf only: a merge, the other leaf still a conflict', async () => {
  const { planItem } = await conflicted()
  const item = await planItem({ prefer: 'remote', leaves: new Map([[PATH, ['/properties/body']]]) })
  expect(item).toMatchObject({ action: 'merge', settledFor: 'remote' })
  expect(leafPaths(item.leaves)).toEqual(['/properties/title/de'])
})

test('of several pointers, the one that names a leaf settles it', async () => {
  const { planItem } = await conflicted()
  const item = await planItem({
    prefer: 'remote',
    leaves: new Map([[PATH, ['/properties/nothing', '/properties/body']]]),
  })
  expect(item).toMatchObject({ action: 'merge', settledFor: 'remote' })
  expect(leafPaths(item.leaves)).toEqual(['/properties/title/de'])
})

test('a pointer names its subtree, not a sibling whose name it begins', async () => {
  const { planItem } = await conflicted()
  const subtree = await planItem({ prefer: 'local', leaves: new Map([[PATH, ['/properties/title']]]) })
  expect(subtree).toMatchObject({ action: 'merge', settledFor: 'local' })
  expect(leafPaths(subtree.leaves)).toEqual(['/properties/body'])
  // '/properties/bod' is no leaf of this file: nothing is settled, the item stays a conflict.
  const prefix = await planItem({ prefer: 'local', leaves: new Map([[PATH, ['/properties/bod']]]) })
  expect(prefix).toMatchObject({ action: 'conflict' })
  expect(prefix.settledFor).toBeUndefined()
  expect(leafPaths(prefix.leaves)).toEqual(['/properties/body', '/properties/title/de'])
})

test('both leaves kept for one side: the file as that side has it, a push or a pull', async () => {
  const { planItem } = await conflicted()
  const both = new Map([[PATH, ['/properties/body', '/properties/title/de']]])
  expect(await planItem({ prefer: 'local', leaves: both })).toMatchObject({
    action: 'push',
    settledFor: 'local',
  })
  const pulled = await planItem({ prefer: 'remote', leaves: both })
  expect(pulled).toMatchObject({ action: 'pull', settledFor: 'remote' })
  expect(pulled.leaves).toBeUndefined()
})

test('without a base text --prefer settles the whole file, but a per-leaf choice leaves it a conflict, saying why', async () => {
  const { planItem, dropBases } = await conflicted()
  await dropBases()
  const whole = await planItem({ prefer: 'local' })
  expect(whole).toMatchObject({ action: 'push', settledFor: 'local' })
  expect(whole.reason).toBeUndefined()
  const perLeaf = await planItem({ prefer: 'local', leaves: new Map([[PATH, ['/properties/body']]]) })
  expect(perLeaf).toMatchObject({
    action: 'conflict',
    reason: 'changed on both sides, and the base text is not known to merge them',
  })
  expect(perLeaf.settledFor).toBeUndefined()
})

test("a base text found outside the state (git's history) merges as the state's would", async () => {
  const { deps, baseText, planItem, dropBases } = await conflicted()
  await dropBases()
  const asked: string[] = []
  const item = await planItem(
    { prefer: 'remote', leaves: new Map([[PATH, ['/properties/body']]]) },
    {
      ...deps,
      baseFallback: async (planned, _hash, _codec, orders) => {
        asked.push(planned.path)
        // The documents whose key order a committed version may have: the server's and the file.
        expect(orders.map((doc) => (doc.properties as { body: string }).body)).toEqual([
          'Remote body',
          'Local body',
        ])
        return baseText
      },
    },
  )
  expect(asked).toEqual([PATH])
  expect(item).toMatchObject({ action: 'merge', settledFor: 'remote' })
  expect(leafPaths(item.leaves)).toEqual(['/properties/title/de'])
})

test('no base text anywhere: the conflict says why, with what the user can change', async () => {
  const { deps, planItem, dropBases } = await conflicted()
  await dropBases()
  const item = await planItem(
    {},
    { ...deps, baseFallback: async () => undefined, whyNoBase: async () => 'the clone is shallow' },
  )
  expect(item).toMatchObject({
    action: 'conflict',
    reason: 'changed on both sides, and the base text is not known to merge them: the clone is shallow',
  })
  const silent = await planItem(
    {},
    { ...deps, baseFallback: async () => undefined, whyNoBase: async () => undefined },
  )
  expect(silent.reason).toBe('changed on both sides, and the base text is not known to merge them')
  const unasked = await planItem({}, { ...deps, baseFallback: async () => undefined })
  expect(unasked.reason).toBe('changed on both sides, and the base text is not known to merge them')
})

test('a merge that is the file as it is: a push, though the server changed too', async () => {
  const { planItem, deps } = await conflicted()
  // The server's edit is one the file has too: the body.
  const file = JSON.parse(await readFile(path.join(deps.root, PATH), 'utf8'))
  ;(deps.client as MemoryRemote).seed('content', {
    ...page,
    properties: { ...properties, body: file.properties.body },
  })
  const item = await planItem({})
  expect(item).toMatchObject({ action: 'push', local: 'modified', remote: 'modified' })
  expect(item.settledFor).toBeUndefined()
})

test('the same edit on both sides is agreement: the base moves, nothing to merge', async () => {
  const { planItem, deps } = await conflicted()
  const file = JSON.parse(await readFile(path.join(deps.root, PATH), 'utf8'))
  ;(deps.client as MemoryRemote).seed('content', { ...page, properties: file.properties })
  expect(await planItem({})).toMatchObject({ action: 'merge-base', local: 'modified', remote: 'modified' })
})
