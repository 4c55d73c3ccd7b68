// Deleting a content's parent on the server moves the child to the root there; upstream does
// it without touching the child's updateDate (issue 13, item 2). The change must still be seen
// and pulled, never left for a later push to fail on; and a file naming a parent the server
// lacks is refused with a message that says so.

import { afterEach, describe, expect, test } from 'vitest'
import { contentOf, startWorld, type World } from '../helpers/sync-world.js'
import { watchReconciled } from '../helpers/watch.js'

const DIALECTS = ['spec', 'upstream'] as const
let world: World | undefined
const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
  await world?.close()
  world = undefined
})

async function family(dialect: (typeof DIALECTS)[number]): Promise<World> {
  const w = await startWorld(dialect, { content: ['home'] })
  await w.server.put('content', 'parent', contentOf('parent'))
  await w.server.put('content', 'child', contentOf('child', { parentId: 'parent' }))
  const first = await w.cli('sync')
  if (first.exitCode !== 0) throw new Error(first.stderr)
  return w
}

describe.each(DIALECTS)('%s: a parent deleted on the server', (dialect) => {
  test("the child's new place is pulled, and a later edit of it is pushed", async () => {
    world = await family(dialect)
    const w = world
    const before = (await w.server.get('content', 'child'))?.updateDate
    await w.server.remove('content', 'parent')
    const orphan = await w.server.get('content', 'child')
    if (dialect === 'upstream') {
      expect(orphan).toMatchObject({ parentId: null, updateDate: before })
    }

    const status = await w.cli('--json', 'status')
    expect(status.json.changes).toEqual([
      expect.objectContaining({ path: 'content/child.json', remote: 'modified', action: 'pull' }),
      expect.objectContaining({ path: 'content/parent.json', action: 'delete-local' }),
    ])
    const pull = await w.cli('pull')
    expect(pull.exitCode, pull.stderr).toBe(0)
    expect((await w.readJson('content/child.json')).parentId).toBe(orphan?.parentId)
    expect(await w.exists('content/parent.json')).toBe(false)
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])

    await w.editJson('content/child.json', { properties: { title: 'Edited after' } })
    const push = await w.cli('push')
    expect(push.exitCode, push.stdout + push.stderr).toBe(0)
    expect((await w.server.get('content', 'child'))?.properties).toEqual({ title: 'Edited after' })
  })

  test('a child edited locally meanwhile is not taken as unchanged on the server', async () => {
    world = await family(dialect)
    const w = world
    await w.editJson('content/child.json', { properties: { title: 'Local edit' } })
    await w.server.remove('content', 'parent')
    const status = await w.cli('--json', 'status')
    expect(status.json.changes).toContainEqual(
      expect.objectContaining({ path: 'content/child.json', local: 'modified', remote: 'modified' }),
    )
    await w.cli('sync')
    // Whatever the run made of it, the local edit is still there.
    expect((await w.readJson('content/child.json')).properties).toEqual({ title: 'Local edit' })
  })
})

describe.each(DIALECTS)('%s: a parent the server lacks', (dialect) => {
  test('is named as such, not as a wrong server URL', async () => {
    world = await startWorld(dialect, { content: ['home'] })
    const w = world
    expect((await w.cli('sync')).exitCode).toBe(0)
    const { createDate: _c, ...file } = contentOf('orphan', { parentId: 'ghost' })
    await w.writeJson('content/orphan.json', file)
    const push = await w.cli('--json', 'push')
    expect(push.exitCode).toBe(1)
    expect(push.json.failed).toEqual([
      expect.objectContaining({
        path: 'content/orphan.json',
        error: expect.stringContaining('parentId "ghost" does not exist on the server'),
      }),
    ])
    expect(push.json.failed[0].error).not.toMatch(/server URL/)
    expect(await w.server.get('content', 'orphan')).toBeUndefined()
  })
})

describe.each(DIALECTS)('%s: a parent deleted locally while it has children', (dialect) => {
  test('is shown by status and refused by push and sync (exit 4, --allow-deletes too), naming the children', async () => {
    world = await family(dialect)
    const w = world
    await w.server.put('content', 'second', contentOf('second', { parentId: 'parent' }))
    expect((await w.cli('sync')).exitCode).toBe(0)
    const server = await w.serverState()
    await w.remove('content/parent.json')

    const status = await w.cli('--json', 'status')
    expect(status.exitCode).toBe(1)
    expect(status.json.changes).toEqual([
      expect.objectContaining({
        path: 'content/parent.json',
        action: 'delete-remote',
        error: expect.stringContaining('content/child.json, content/second.json'),
      }),
    ])
    for (const args of [['push'], ['sync'], ['push', '--allow-deletes'], ['push', '--dry-run']]) {
      const run = await w.cli(...args)
      expect(run.exitCode, args.join(' ')).toBe(4)
      expect(run.stderr, args.join(' ')).toMatch(
        /deleting content\/parent\.json on the server would leave its children without a parent .*content\/child\.json, content\/second\.json.*nothing was changed/,
      )
      expect(await w.serverState(), args.join(' ')).toEqual(server)
    }
    expect(await w.exists('content/parent.json')).toBe(false)
  })

  test('goes ahead when the same run deletes one child and moves the other to the root', async () => {
    world = await family(dialect)
    const w = world
    await w.server.put('content', 'second', contentOf('second', { parentId: 'parent' }))
    expect((await w.cli('sync')).exitCode).toBe(0)
    await w.remove('content/parent.json')
    await w.remove('content/child.json')
    const status = await w.cli('--json', 'status')
    expect(status.json.changes.find((c: { path: string }) => c.path === 'content/parent.json').error).toMatch(
      /children without a parent .*: content\/second\.json$|content\/second\.json;/,
    )
    await w.editJson('content/second.json', { parentId: '' })
    expect((await w.cli('--json', 'status')).exitCode).toBe(0)
    // Two of four content items: the share guard wants --allow-deletes; the orphan guard is satisfied
    const push = await w.cli('push', '--allow-deletes')
    expect(push.exitCode, push.stderr).toBe(0)
    expect(await w.server.get('content', 'parent')).toBeUndefined()
    expect(await w.server.get('content', 'child')).toBeUndefined()
    expect((await w.server.get('content', 'second'))?.parentId || '').toBe('')
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])
  })

  test('a path argument that leaves the children out of the run is refused too', async () => {
    world = await family(dialect)
    const w = world
    await w.remove('content/parent.json')
    await w.remove('content/child.json')
    const run = await w.cli('push', 'content/parent.json')
    expect(run.exitCode).toBe(4)
    expect(run.stderr).toMatch(/content\/child\.json/)
    expect(await w.server.get('content', 'parent')).toBeDefined()
  })
})

describe.each(DIALECTS)('%s: a parent deleted while watch runs', (dialect) => {
  test('the delete is held with the children named, the tree on the server stays, the rest syncs', async () => {
    world = await family(dialect)
    const w = world
    const d = await watchReconciled(w, cleanups)
    await w.remove('content/parent.json')
    const held = await d.waitForEvent({ event: 'held' })
    expect(held.held).toMatchObject([
      { guard: 'orphans', side: 'local', action: 'delete-remote', paths: ['content/parent.json'] },
    ])
    expect(held.held[0].reason).toMatch(/still has children on the server \(content\/child\.json/)
    expect(await w.server.get('content', 'parent')).toBeDefined()
    expect((await w.server.get('content', 'child'))?.parentId).toBe('parent')
    // Only that delete waits: an edit of the child still goes to the server
    await w.editJson('content/child.json', { sort: 9 })
    await d.waitForEvent({ event: 'pushed', path: 'content/child.json' })
    expect(await w.server.get('content', 'child')).toMatchObject({ sort: 9, parentId: 'parent' })
  })
})
