// Deleting a schema that content still uses: the server takes the delete and leaves the content
// pointing at nothing, which can then never be pushed again. cms-sync refuses such a delete
// before sending it, naming the content, unless the same run deletes or moves that content.

import { afterEach, describe, expect, test } from 'vitest'
import { SECTION_SCHEMA, syncedWorld, type World } from '../helpers/sync-world.js'

describe.each(['spec', 'upstream'] as const)('a schema still in use (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test('its delete is refused, naming the content that uses it; nothing else is held back', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await w.remove('schemas/section.json')
    await w.editJson('content/shop.json', { properties: { title: 'Shop (edited)' } })
    // --allow-deletes lifts the count guard (one schema of one), not this check.
    const push = await w.cli('--json', 'push', '--allow-deletes')
    expect(push.exitCode).toBe(1)
    const failed = push.json.failed as Array<{ path: string; error: string }>
    expect(failed).toEqual([expect.objectContaining({ path: 'schemas/section.json' })])
    expect(failed[0]!.error).toMatch(
      /still used by content\/contact\.json, content\/home\.json, content\/news\.json, content\/shop\.json/,
    )
    // The schema is still there, the other edit went through.
    expect(await w.server.get('schema', 'section')).toBeDefined()
    expect(((await w.server.get('content', 'shop'))!.properties as { title: string }).title).toBe(
      'Shop (edited)',
    )
  })

  test('the same run may delete that content first', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await w.remove('schemas/section.json')
    for (const id of ['home', 'news', 'contact', 'shop']) await w.remove(`content/${id}.json`)
    const push = await w.cli('--json', 'push', '--allow-deletes')
    expect(push.exitCode).toBe(0)
    expect(await w.server.get('schema', 'section')).toBeUndefined()
    expect(await w.server.list('content')).toEqual([])
  })

  test('the same run may move that content to another schema first', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await w.writeJson('schemas/chapter.json', {
      ...SECTION_SCHEMA,
      id: 'chapter',
      name: 'Chapter',
      allowedChildSchemas: ['chapter'],
    })
    await w.remove('schemas/section.json')
    for (const id of ['home', 'news', 'contact'])
      await w.editJson(`content/${id}.json`, { schemaId: 'chapter' })
    // One node still uses it: the delete is held, naming only that one.
    const held = await w.cli('--json', 'push', '--allow-deletes')
    expect(held.exitCode).toBe(1)
    expect(held.json.failed).toEqual([
      expect.objectContaining({
        path: 'schemas/section.json',
        error: expect.stringMatching(/still used by content\/shop\.json[^,]/),
      }),
    ])
    expect(await w.server.get('schema', 'section')).toBeDefined()
    await w.editJson('content/shop.json', { schemaId: 'chapter' })
    expect((await w.cli('push', '--allow-deletes')).exitCode).toBe(0)
    expect(await w.server.get('schema', 'section')).toBeUndefined()
    for (const id of ['home', 'news', 'contact', 'shop'])
      expect((await w.server.get('content', id))?.schemaId).toBe('chapter')
  })

  test('when moving that content fails, the schema is not deleted either', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await w.writeJson('schemas/chapter.json', { ...SECTION_SCHEMA, id: 'chapter', name: 'Chapter' })
    await w.remove('schemas/section.json')
    for (const id of ['home', 'news', 'contact', 'shop'])
      await w.editJson(`content/${id}.json`, { schemaId: 'chapter' })
    w.proxy.override = (method, route) =>
      method === 'POST' && route.includes('/content/shop') ? { status: 400, body: 'refused' } : undefined
    const push = await w.cli('--json', 'push', '--allow-deletes')
    expect(push.exitCode).toBe(1)
    expect(push.json.failed.map((f: { path: string }) => f.path).sort()).toEqual([
      'content/shop.json',
      'schemas/section.json',
    ])
    expect(await w.server.get('schema', 'section')).toBeDefined()
    expect((await w.server.get('content', 'shop'))?.schemaId).toBe('section')
  })
})
