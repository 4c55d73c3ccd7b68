// The engine's merges: an item changed on both sides goes through the one plan, and sync,
// pull and push each carry out their part of it (src/engine/merges.ts, apply-item.ts mergeItem).

import { execFileSync } from 'node:child_process'
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, test } from 'vitest'
import { type ApplyOptions, applyRun, planRun, SELECT } from '../../src/engine/plan-and-apply.js'
import { LOOSE_LIMIT } from '../../src/state/base-store.js'
import { loadState } from '../../src/state/state-file.js'
import { engineOver, RUN_OPTIONS } from '../helpers/engine-world.js'
import { contentOf, SECTION_SCHEMA } from '../helpers/fixtures.js'

const properties = { title: { _multilingual: true, en: 'Home', de: 'Start' }, body: 'Welcome' }
const page = contentOf('home', { properties })

/** `others`: content items seeded besides the page (ids sorted before it, so pulled first). */
async function setup(others = 0) {
  const { root, remote, deps } = await engineOver('merge-run')
  for (let i = 0; i < others; i++) remote.seed('content', contentOf(`aa-${String(i).padStart(3, '0')}`))
  remote.seed('content', page)
  const run = async (
    select: ApplyOptions['select'],
    extra: Partial<ApplyOptions> = {},
    prefer?: 'local' | 'remote',
  ) => applyRun(deps, await planRun(deps, prefer ? { prefer } : {}), { ...RUN_OPTIONS, select, ...extra })
  await run(SELECT.sync)
  const file = path.join(root, 'content/home.json')
  const readFileJson = async () => JSON.parse(await readFile(file, 'utf8'))
  /** Both sides edit: the German title in the file, the English body on the server. */
  const editBoth = async () => {
    const local = await readFileJson()
    local.properties.title.de = 'Startseite'
    await writeFile(file, JSON.stringify(local))
    remote.seed('content', { ...page, properties: { ...properties, body: 'Welcome!' } })
  }
  return { root, remote, deps, run, readFileJson, editBoth }
}

const merged = { title: { _multilingual: true, en: 'Home', de: 'Startseite' }, body: 'Welcome!' }

test('sync merges edits of different leaves: both sides get both, the server copy goes to trash', async () => {
  const { root, remote, run, readFileJson, editBoth } = await setup()
  await editBoth()
  const outcome = await run(SELECT.sync)
  expect(outcome).toMatchObject({
    applied: [{ path: 'content/home.json', local: 'modified', remote: 'modified', action: 'merge' }],
    conflicts: [],
    failed: [],
  })
  expect((await readFileJson()).properties).toEqual(merged)
  expect(remote.items.get('content:home')).toMatchObject({ properties: merged })
  const trash = await readdir(path.join(root, '.cms-sync/trash'), { recursive: true })
  expect(trash.some((name) => name.endsWith('home.json.remote'))).toBe(true)
  // Settled: the next run has nothing to do, and only the current bases are kept.
  expect(await run(SELECT.sync)).toEqual({ applied: [], conflicts: [], failed: [] })
  const bases = await readdir(path.join(root, '.cms-sync/bases'))
  expect(bases).toHaveLength(2) // the schema's and the merged page's
})

test('a base kept in the pack of a pull (beyond the first bases of a run) merges as a blob does', async () => {
  const { root, run, readFileJson, editBoth, remote } = await setup(LOOSE_LIMIT + 20)
  const state = await loadState(root)
  const baseHash = state!.items['content/home.json']!.baseHash
  // The page's base is in the pack, not a blob of its own: this test reads from a pack.
  const names = await readdir(path.join(root, '.cms-sync/bases'))
  expect(names).not.toContain(baseHash)
  expect(names.filter((name) => name.startsWith('pack-'))).toHaveLength(1)
  await editBoth()
  const outcome = await run(SELECT.sync)
  expect(outcome).toMatchObject({
    applied: [{ path: 'content/home.json', local: 'modified', remote: 'modified', action: 'merge' }],
    conflicts: [],
  })
  expect((await readFileJson()).properties).toEqual(merged)
  expect(remote.items.get('content:home')).toMatchObject({ properties: merged })
})

test('pull writes the merge into the file only; the next push sends it', async () => {
  const { remote, run, readFileJson, editBoth } = await setup()
  await editBoth()
  remote.calls = []
  const pulled = await run(SELECT.pull, { mergeWrites: 'local' })
  expect(pulled.applied).toMatchObject([{ path: 'content/home.json', action: 'merge' }])
  expect(remote.calls.filter((c) => c.startsWith('put'))).toEqual([])
  expect((await readFileJson()).properties).toEqual(merged)
  const pushed = await run(SELECT.push, { mergeWrites: 'remote' })
  expect(pushed.applied).toMatchObject([{ path: 'content/home.json', action: 'push' }])
  expect(remote.items.get('content:home')).toMatchObject({ properties: merged })
  expect(await run(SELECT.sync)).toEqual({ applied: [], conflicts: [], failed: [] })
})

test('push writes the merge to the server only; the next pull brings it', async () => {
  const { root, remote, run, readFileJson, editBoth } = await setup()
  await editBoth()
  const before = await readFile(path.join(root, 'content/home.json'), 'utf8')
  const pushed = await run(SELECT.push, { mergeWrites: 'remote' })
  expect(pushed.applied).toMatchObject([{ path: 'content/home.json', action: 'merge' }])
  expect(remote.items.get('content:home')).toMatchObject({ properties: merged })
  expect(await readFile(path.join(root, 'content/home.json'), 'utf8')).toBe(before)
  const pulled = await run(SELECT.pull, { mergeWrites: 'local' })
  expect(pulled.applied).toMatchObject([{ path: 'content/home.json', action: 'pull' }])
  expect((await readFileJson()).properties).toEqual(merged)
  expect(await run(SELECT.sync)).toEqual({ applied: [], conflicts: [], failed: [] })
})

test('without the base text a both-sides edit stays a whole-file conflict, and says why', async () => {
  const { root, run, editBoth } = await setup()
  await editBoth()
  await rm(path.join(root, '.cms-sync/bases'), { recursive: true })
  const outcome = await run(SELECT.sync)
  expect(outcome.conflicts).toMatchObject([
    { path: 'content/home.json', action: 'conflict', reason: expect.stringMatching(/base text/) },
  ])
})

test('the merge is checked like any file before it is pushed: an unknown schema fails, nothing is written', async () => {
  const { root, remote, run } = await setup()
  const file = path.join(root, 'content/home.json')
  const local = JSON.parse(await readFile(file, 'utf8'))
  await writeFile(file, JSON.stringify({ ...local, schemaId: 'nowhere' }))
  remote.seed('content', { ...page, sort: 7 })
  remote.calls = []
  const outcome = await run(SELECT.sync)
  expect(outcome.failed).toMatchObject([
    { path: 'content/home.json', error: expect.stringMatching(/nowhere/) },
  ])
  expect(remote.calls.filter((c) => c.startsWith('put'))).toEqual([])
  expect(JSON.parse(await readFile(file, 'utf8')).sort).toBe(1)
})

test('--prefer settles only the conflicting leaves; the other side keeps its own edits', async () => {
  const { remote, run, readFileJson, root } = await setup()
  const file = path.join(root, 'content/home.json')
  const local = await readFileJson()
  local.properties.body = 'Local body'
  local.sort = 3
  await writeFile(file, JSON.stringify(local))
  remote.seed('content', {
    ...page,
    properties: { ...properties, body: 'Remote body' },
    isPublished: true,
  })
  const outcome = await run(SELECT.sync, {}, 'local')
  expect(outcome.applied).toMatchObject([{ path: 'content/home.json', action: 'merge' }])
  expect(remote.items.get('content:home')).toMatchObject({
    sort: 3,
    isPublished: true,
    properties: { body: 'Local body' },
  })
  expect(await readFileJson()).toMatchObject({ sort: 3, isPublished: true })
})

/**
 * Puts a pipe no one writes to in place of every stored base: a run that opened one would wait
 * on it until the test times out. Returns a function that puts the bases back.
 */
async function blockBases(root: string): Promise<() => Promise<void>> {
  const folder = path.join(root, '.cms-sync/bases')
  const names = await readdir(folder)
  expect(names.length).toBeGreaterThan(0)
  for (const name of names) {
    await rename(path.join(folder, name), path.join(folder, `${name}.aside`))
    execFileSync('mkfifo', [path.join(folder, name)])
  }
  return async () => {
    for (const name of names) await rename(path.join(folder, `${name}.aside`), path.join(folder, name))
  }
}

test('only items changed on both sides read a base: a no-change plan and one-sided changes read none', async () => {
  const { root, remote, deps, run, editBoth } = await setup()
  const unblock = await blockBases(root)
  await planRun(deps, {})
  const file = path.join(root, 'content/home.json')
  await writeFile(file, (await readFile(file, 'utf8')).replace('Welcome', 'Hello'))
  remote.seed('schema', { ...SECTION_SCHEMA, name: 'Renamed' })
  expect((await run(SELECT.sync)).applied).toHaveLength(2)
  // Both sides changed: the base is what lets the merge take each side's leaf.
  await unblock()
  await editBoth()
  const both = (await planRun(deps, {})).plan.items.find((item) => item.path === 'content/home.json')
  expect(both).toMatchObject({ local: 'modified', remote: 'modified', action: 'merge' })
})
