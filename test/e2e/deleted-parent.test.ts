// Deleting a content's parent on the server moves the child to the root there; upstream does
// it without touching the child's updateDate (issue 13, item 2). The change must still be seen
// and pulled, never left for a later push to fail on; and a file naming a parent the server
// lacks is refused with a message that says so.

import { afterEach, describe, expect, test } from 'vitest'
import { contentOf, startWorld, type World } from '../helpers/sync-world.js'

const DIALECTS = ['spec', 'upstream'] as const
let world: World | undefined
afterEach(async () => {
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
