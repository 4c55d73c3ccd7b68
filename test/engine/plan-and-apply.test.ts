import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, test } from 'vitest'
import { applyRun, planRun, SELECT } from '../../src/engine/plan-and-apply.js'
import { loadState } from '../../src/state/state-file.js'
import { engineOver, RUN_OPTIONS } from '../helpers/engine-world.js'
import { contentOf } from '../helpers/fixtures.js'
import { editKeepingStat } from '../helpers/same-stat.js'
import { copyState, putState } from '../helpers/state-files.js'

const page = contentOf('home', { createDate: '2020-01-01T00:00:00.000Z', properties: { title: 'Home' } })

/** The file form of a content (no createDate: that lives in the state). */
const asFile = (props: object) => JSON.stringify({ ...page, createDate: undefined, ...props })

async function setup() {
  const { root, remote, deps } = await engineOver('engine')
  remote.seed('content', page)
  remote.seed('content', { ...page, id: 'about', parentId: 'home', properties: { title: 'About' } })
  const opts = RUN_OPTIONS
  const sync = async (extra: Partial<typeof opts> & { prefer?: 'local' | 'remote' } = {}) =>
    applyRun(deps, await planRun(deps, { ...(extra.prefer ? { prefer: extra.prefer } : {}) }), {
      ...opts,
      ...extra,
      select: SELECT.sync,
    })
  return { root, remote, deps, sync }
}

test('a first sync pulls everything as canonical files without volatile fields', async () => {
  const { root, sync } = await setup()
  const outcome = await sync()
  expect(outcome.applied.map((i) => i.path).sort()).toEqual([
    'content/about.json',
    'content/home.json',
    'schemas/section.json',
  ])
  const home = await readFile(path.join(root, 'content/home.json'), 'utf8')
  expect(home).not.toContain('createDate')
  expect(home).not.toContain('updateDate')
  expect(home.endsWith('}\n')).toBe(true)
})

test('a second run reads no file and changes nothing', async () => {
  const { root, sync } = await setup()
  await sync()
  // Edits the stat cache cannot see: a run that read any of these files would push the edit.
  await editKeepingStat(path.join(root, 'content/home.json'), '"Home"', '"Hone"')
  await editKeepingStat(path.join(root, 'content/about.json'), '"About"', '"Abort"')
  await editKeepingStat(path.join(root, 'schemas/section.json'), '"Section"', '"Sektion"')
  const before = (await stat(path.join(root, 'content/home.json'))).mtimeMs
  const outcome = await sync()
  expect(outcome).toEqual({ applied: [], conflicts: [], failed: [] })
  expect((await stat(path.join(root, 'content/home.json'))).mtimeMs).toBe(before)
  expect(await readFile(path.join(root, 'content/home.json'), 'utf8')).toContain('"Hone"')
})

test('a local edit is pushed with the stored createDate; a remote edit is pulled', async () => {
  const { root, remote, sync } = await setup()
  await sync()
  await writeFile(path.join(root, 'content/home.json'), asFile({ properties: { title: 'New' } }))
  remote.seed('content', { ...page, id: 'about', parentId: 'home', properties: { title: 'About us' } })
  const outcome = await sync()
  expect(outcome.applied.map((i) => [i.path, i.action])).toEqual([
    ['content/home.json', 'push'],
    ['content/about.json', 'pull'],
  ])
  expect(remote.items.get('content:home')).toMatchObject({
    createDate: '2020-01-01T00:00:00.000Z',
    properties: { title: 'New' },
  })
  expect(JSON.parse(await readFile(path.join(root, 'content/about.json'), 'utf8')).properties.title).toBe(
    'About us',
  )
})

test('edits of one leaf on both sides are a conflict; the remote copy is kept; --prefer remote settles it with the local in trash', async () => {
  const { root, remote, sync } = await setup()
  await sync()
  await writeFile(path.join(root, 'content/home.json'), asFile({ properties: { title: 'Local' } }))
  remote.seed('content', { ...page, properties: { title: 'Remote' } })
  const first = await sync()
  expect(first.conflicts).toMatchObject([
    {
      path: 'content/home.json',
      local: 'modified',
      remote: 'modified',
      action: 'conflict',
      leaves: [{ path: '/properties/title', local: 'Local', remote: 'Remote' }],
    },
  ])
  expect(await readFile(path.join(root, '.cms-sync/conflicts/content/home.json.remote'), 'utf8')).toContain(
    'Remote',
  )
  const settled = await sync({ prefer: 'remote' })
  // The conflicting leaf takes the remote value; nothing else changed, so the merge is the server copy.
  expect(settled.applied).toMatchObject([{ path: 'content/home.json', action: 'pull' }])
  expect(JSON.parse(await readFile(path.join(root, 'content/home.json'), 'utf8')).properties.title).toBe(
    'Remote',
  )
})

test('a remote edit made after the listing becomes a conflict, not an overwrite', async () => {
  const { root, remote, deps } = await setup()
  const opts = { ...RUN_OPTIONS, select: SELECT.sync }
  await applyRun(deps, await planRun(deps, {}), opts)
  await writeFile(path.join(root, 'content/home.json'), asFile({ properties: { title: 'Local' } }))
  const planned = await planRun(deps, {})
  remote.seed('content', { ...page, properties: { title: 'Sneaky' } })
  const outcome = await applyRun(deps, planned, opts)
  expect(outcome.conflicts).toMatchObject([
    { path: 'content/home.json', reason: expect.stringMatching(/changed since/) },
  ])
  expect(remote.items.get('content:home')).toMatchObject({ properties: { title: 'Sneaky' } })
})

test('children are pushed after parents and deleted before them', async () => {
  const { root, remote, sync } = await setup()
  await sync()
  await mkdir(path.join(root, 'content'), { recursive: true })
  await writeFile(
    path.join(root, 'content/b-child.json'),
    JSON.stringify({ id: 'b-child', schemaId: 'page', parentId: 'z-parent' }),
  )
  await writeFile(
    path.join(root, 'content/z-parent.json'),
    JSON.stringify({ id: 'z-parent', schemaId: 'page' }),
  )
  remote.calls = []
  await sync()
  expect(remote.calls.filter((c) => c.startsWith('put'))).toEqual([
    'put content z-parent',
    'put content b-child',
  ])
})

test('a bad file fails alone; the others are pushed', async () => {
  const { root, remote, sync } = await setup()
  await sync()
  await writeFile(path.join(root, 'content/bad.json'), '{ nope')
  await writeFile(
    path.join(root, 'content/ghost.json'),
    JSON.stringify({ id: 'ghost', schemaId: 'no-such-schema' }),
  )
  await writeFile(path.join(root, 'content/good.json'), JSON.stringify({ id: 'good', schemaId: 'section' }))
  const outcome = await sync()
  expect(outcome.failed.map((f) => [f.path, f.error])).toEqual([
    ['content/bad.json', expect.stringMatching(/invalid JSON/)],
    ['content/ghost.json', expect.stringMatching(/unknown schema "no-such-schema"/)],
  ])
  expect(outcome.applied.map((i) => i.path)).toEqual(['content/good.json'])
  expect(remote.items.has('content:bad')).toBe(false)
})

test('a run whose state was not saved (a crash) is recovered by the next run without conflicts', async () => {
  const { root, remote, sync } = await setup()
  await sync()
  const saved = await copyState(root)
  // Changes on both sides are applied, then the process "dies" before the state is saved
  await writeFile(path.join(root, 'content/home.json'), asFile({ properties: { title: 'Local' } }))
  remote.seed('content', { ...page, id: 'about', parentId: 'home', properties: { title: 'Remote' } })
  await sync()
  await putState(root, saved)
  // The next run sees both sides equal and adopts them
  expect(await sync()).toEqual({ applied: [], conflicts: [], failed: [] })
  expect(await sync()).toEqual({ applied: [], conflicts: [], failed: [] })
})

test('an inherited item is mirrored and marked; its edit makes the server pull a local copy before the write', async () => {
  const { root, remote, sync } = await setup()
  remote.seed('content', {
    ...page,
    id: 'shared',
    isLocked: true,
    sync: { isRemote: true, hasRemote: false },
  })
  await sync()
  const state = (await loadState(root))!
  expect(state.items['content/shared.json']!.inherited).toBe(true)
  expect(state.items['content/home.json']!.inherited).toBeUndefined()

  remote.calls = []
  expect(await sync()).toEqual({ applied: [], conflicts: [], failed: [] })
  expect(remote.calls.filter((c) => !c.startsWith('list'))).toEqual([])

  await writeFile(
    path.join(root, 'content/shared.json'),
    asFile({ id: 'shared', properties: { title: 'Mine' } }),
  )
  remote.calls = []
  const outcome = await sync()
  expect(outcome.applied).toEqual([
    expect.objectContaining({ path: 'content/shared.json', action: 'push', inherited: true }),
  ])
  const writes = remote.calls.filter((c) => c.startsWith('pull') || c.startsWith('put'))
  expect(writes).toEqual(['pull content shared', 'put content shared'])
})

test('a file that appears between the plan and the pull is kept, and the item is a conflict', async () => {
  const { root, deps } = await setup()
  const planned = await planRun(deps, {})
  await mkdir(path.join(root, 'content'), { recursive: true })
  await writeFile(path.join(root, 'content/home.json'), 'written by the user meanwhile')
  const outcome = await applyRun(deps, planned, { ...RUN_OPTIONS, select: SELECT.sync })
  expect(outcome.conflicts.map((c) => c.path)).toEqual(['content/home.json'])
  expect(await readFile(path.join(root, 'content/home.json'), 'utf8')).toBe('written by the user meanwhile')
  // The other items arrived, and no temp file was left behind.
  expect(outcome.applied.map((i) => i.path).sort()).toEqual(['content/about.json', 'schemas/section.json'])
  expect((await readdir(path.join(root, 'content'))).sort()).toEqual(['about.json', 'home.json'])
})
