// Inherited content end to end, with two emulators: a parent and a child whose project settings
// point at it (upstream §9). The child's inherited items are mirrored and marked, an edit of
// one makes the child's own copy before writing it, and promote sends items up to the parent.

import { afterEach, describe, expect, it } from 'vitest'
import { loadState } from '../../src/state/state-file.js'
import { contentOf, inheritingWorld, type World } from '../helpers/sync-world.js'

const DIALECTS = ['spec', 'upstream'] as const
let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

const titleOf = (item: Record<string, unknown> | undefined) =>
  (item?.properties as Record<string, unknown> | undefined)?.title

describe.each(DIALECTS)('%s: inherited content', (dialect) => {
  it('mirrors inherited items, marks them in status, and an edit pulls a local copy before writing', async () => {
    const family = await inheritingWorld(dialect)
    world = family.world
    const first = await world.cli('sync')
    expect(first.stderr).toBe('')
    expect(first.exitCode).toBe(0)
    expect(await world.readJson('content/inherited-page.json')).toMatchObject({
      properties: { title: 'inherited-page from the parent' },
    })
    const clean = await world.cli('status', '--json')
    expect(clean.exitCode).toBe(0)
    expect(clean.json).toMatchObject({ clean: true, inherited: ['content/inherited-page.json'] })
    const state = (await loadState(world.root))!
    expect(state.items['content/inherited-page.json']!.inherited).toBe(true)

    await world.editJson('content/inherited-page.json', { properties: { title: 'Edited in the child' } })
    const pending = await world.cli('status', '--json')
    expect(pending.json.changes).toEqual([
      expect.objectContaining({ path: 'content/inherited-page.json', action: 'push', inherited: true }),
    ])
    const text = await world.cli('status')
    expect(text.stdout).toContain('[inherited from the parent project]')

    const before = world.proxy.seen.length
    const push = await world.cli('push')
    expect(push.stderr).toBe('')
    expect(push.exitCode).toBe(0)
    const calls = world.proxy.seen.slice(before)
    const pull = calls.indexOf('POST /api/demo/live/content/pull/inherited-page')
    const write = calls.indexOf('POST /api/demo/live/content/inherited-page')
    expect(pull).toBeGreaterThanOrEqual(0)
    expect(write).toBeGreaterThan(pull)

    // The child now holds its own copy; the parent's is untouched.
    const listed = await world.server.list('content')
    expect(listed.find((c) => c.id === 'inherited-page')).toMatchObject({
      isLocked: false,
      sync: { isRemote: false, hasRemote: true },
      properties: { title: 'Edited in the child' },
    })
    expect(titleOf(await family.parentClient.get('content', 'inherited-page'))).toBe(
      'inherited-page from the parent',
    )
    const after = await world.cli('status', '--json')
    expect(after.json.clean).toBe(true)
    expect(after.json.inherited).toBeUndefined()
  })

  it('promote sends items up to the parent; --dry-run changes nothing; unsynced edits are refused', async () => {
    const family = await inheritingWorld(dialect)
    world = family.world
    expect((await world.cli('sync')).exitCode).toBe(0)

    const dry = await world.cli('promote', 'content/home.json', '--dry-run', '--json')
    expect(dry.exitCode).toBe(0)
    expect(dry.json).toMatchObject({
      dryRun: true,
      applied: [{ path: 'content/home.json', action: 'promote' }],
    })
    expect(await family.parentClient.get('content', 'home')).toBeUndefined()

    const promoted = await world.cli('promote', 'content/home.json')
    expect(promoted.stderr).toBe('')
    expect(promoted.exitCode).toBe(0)
    expect(promoted.stdout).toContain('promoted 1')
    expect(titleOf(await family.parentClient.get('content', 'home'))).toBe('home')

    await world.editJson('content/home.json', { properties: { title: 'Not pushed yet' } })
    const refused = await world.cli('promote', 'content/home.json', 'content/inherited-page.json')
    expect(refused.exitCode).toBe(1)
    expect(refused.stdout).toContain('unsynced changes')
    expect(refused.stdout).toContain('already inherited')
    expect(titleOf(await family.parentClient.get('content', 'home'))).toBe('home')

    const nothing = await world.cli('promote', 'content/nowhere.json')
    expect(nothing.exitCode).toBe(2)
  })

  it('an inherited item under an inherited parent can be edited and promoted (issue 13, item 8)', async () => {
    const family = await inheritingWorld(dialect, { parentContent: ['inherited-page'] })
    world = family.world
    await family.parentClient.put(
      'content',
      'inherited-child',
      contentOf('inherited-child', { parentId: 'inherited-page', properties: { title: 'child' } }),
    )
    expect((await world.cli('sync')).exitCode).toBe(0)
    expect(await world.readJson('content/inherited-child.json')).toMatchObject({ parentId: 'inherited-page' })

    await world.editJson('content/inherited-child.json', { properties: { title: 'Edited in the child' } })
    const push = await world.cli('push', '--json')
    expect(push.json.failed).toEqual([])
    expect(push.exitCode).toBe(0)
    expect(titleOf(await world.server.get('content', 'inherited-child'))).toBe('Edited in the child')

    const promoted = await world.cli('promote', 'content/inherited-child.json')
    expect(promoted.stdout + promoted.stderr).toContain('promoted 1')
    expect(promoted.exitCode).toBe(0)
    expect(await family.parentClient.get('content', 'inherited-child')).toMatchObject({
      parentId: 'inherited-page',
      properties: { title: 'Edited in the child' },
    })
  })

  it('deleting an inherited file is refused with a reason; both servers keep the item', async () => {
    const family = await inheritingWorld(dialect)
    world = family.world
    expect((await world.cli('sync')).exitCode).toBe(0)
    await world.remove('content/inherited-page.json')
    const push = await world.cli('push', '--json')
    expect(push.exitCode).toBe(1)
    expect(push.json.failed).toEqual([
      expect.objectContaining({
        path: 'content/inherited-page.json',
        action: 'delete-remote',
        inherited: true,
        error: expect.stringContaining('cannot delete it'),
      }),
    ])
    expect((await world.server.list('content')).map((c) => c.id)).toContain('inherited-page')
    expect(await family.parentClient.get('content', 'inherited-page')).toBeDefined()
  })

  it('when the server stops inheriting, its inherited items vanishing is a safety stop, not deletions', async () => {
    const family = await inheritingWorld(dialect, { parentContent: ['inherited-a', 'inherited-b'] })
    world = family.world
    expect((await world.cli('sync')).exitCode).toBe(0)
    // What upstream does to itself after one failed read of the parent (§9).
    await world.server.request('POST', '/api/demo/settings/sync', { body: { enabled: false } })
    const stopped = await world.cli('sync')
    expect(stopped.exitCode).toBe(4)
    expect(stopped.stderr).toContain('no longer lists any of the 2 items it inherited')
    expect(await world.exists('content/inherited-a.json')).toBe(true)
    const allowed = await world.cli('sync', '--allow-deletes')
    expect(allowed.exitCode).toBe(0)
    expect(await world.exists('content/inherited-a.json')).toBe(false)
  })

  it('promote refuses when the project inherits from no parent', async () => {
    const family = await inheritingWorld(dialect)
    world = family.world
    expect((await world.cli('sync')).exitCode).toBe(0)
    await world.server.request('POST', '/api/demo/settings/sync', { body: { enabled: false } })
    const refused = await world.cli('promote', 'content/home.json')
    expect(refused.exitCode).toBe(1)
    expect(refused.stdout).toContain('inherits from no parent')
    expect(await family.parentClient.get('content', 'home')).toBeUndefined()
  })
})

describe('upstream: a new item on an inheriting server', () => {
  it('is created without a by-id read the server would forward to its parent (which disables its sync)', async () => {
    const family = await inheritingWorld('upstream')
    world = family.world
    expect((await world.cli('sync')).exitCode).toBe(0)
    await world.writeJson('content/brand-new.json', {
      id: 'brand-new',
      parentId: '',
      schemaId: 'section',
      sort: 2,
      isPublished: false,
      publishOn: null,
      unpublishOn: null,
      properties: { title: 'New here' },
      settings: { publishing: { connectionId: '' } },
    })
    const before = world.proxy.seen.length
    const push = await world.cli('push')
    expect(push.stderr).toBe('')
    expect(push.exitCode).toBe(0)
    expect(world.proxy.seen.slice(before)).not.toContain('GET /api/demo/live/content/brand-new')
    const settings = await world.server.request('GET', '/api/demo/settings/sync')
    expect(settings.body).toMatchObject({ enabled: true })
    const status = await world.cli('status', '--json')
    expect(status.json).toMatchObject({ clean: true, inherited: ['content/inherited-page.json'] })
  })
})
