// The content tree on the real server: parents before children, moves and re-sorting,
// multilingual fields in the project's languages, schedule dates (which only GET by id shows),
// a move the parent's schema refuses, a parent deleted on the server, key order and authorship.

import { rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  cleanupTemps,
  expectOnly,
  freshProject,
  type Item,
  initWorkspace,
  SETUP,
  type ServerState,
  serverState,
  type Upstream,
  type Workspace,
} from './harness.js'

const SECTION = {
  id: 'section',
  name: 'Section',
  icon: 'file',
  type: 'content',
  parentSchemaId: 'page',
  hiddenProperties: [],
  defaultTabId: 'content',
  tabs: { content: 'Content' },
  fields: {
    properties: {
      heading: { label: 'Heading', schemaId: 'string', tabId: 'content', multilingual: true },
      body: { label: 'Body', schemaId: 'richText', tabId: 'content', multilingual: true },
    },
  },
  allowedAtRoot: true,
  allowedChildSchemas: ['section'],
}
/** A schema whose nodes take no children. */
const LEAF = { ...SECTION, id: 'leaf', name: 'Leaf', allowedChildSchemas: [] }

function node(id: string, parentId: string, sort: number, schemaId = 'section') {
  return {
    id,
    parentId,
    schemaId,
    sort,
    // Not published: these nodes name no connection, and publishing one would fail by design.
    isPublished: false,
    publishOn: null,
    unpublishOn: null,
    properties: {
      heading: { _multilingual: true, en: `${id} (en)`, de: `${id} (de)` },
      body: { _multilingual: true, en: `<p>${id}</p>`, de: `<p>${id} auf Deutsch</p>` },
    },
    settings: { publishing: { connectionId: '' } },
  }
}

describe.skipIf(!SETUP)('the content tree (real upstream server)', () => {
  let up: Upstream
  let ws: Workspace
  let state: ServerState

  beforeAll(async () => {
    up = await freshProject('tree')
    // The project speaks English and German, as its editors would set it.
    const res = await fetch(`${up.url}/api/${up.project}/settings/languages`, {
      method: 'POST',
      headers: { cookie: `token=${up.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(['en', 'de']),
    })
    expect(res.status).toBe(200)
    ws = await initWorkspace(up, 'tree')
    await ws.ok('pull')
    state = await serverState(up.api)
  })
  afterAll(cleanupTemps)

  it('a tree three levels deep is created parents first, with both languages', async () => {
    await ws.writeJson('schemas/section.json', SECTION)
    await ws.writeJson('schemas/leaf.json', LEAF)
    // Written children first: the order of the files must not matter.
    await ws.writeJson('content/team.json', node('team', 'about', 1))
    await ws.writeJson('content/history.json', node('history', 'about', 2))
    await ws.writeJson('content/about.json', node('about', 'home', 1))
    await ws.writeJson('content/blog.json', node('blog', 'home', 2))
    await ws.writeJson('content/home.json', node('home', '', 1))
    await ws.writeJson('content/note.json', node('note', '', 2, 'leaf'))
    await ws.ok('push')
    state = await expectOnly(up.api, state, {
      added: [
        'schemas/section',
        'schemas/leaf',
        ...['team', 'history', 'about', 'blog', 'home', 'note'].map((id) => `content/${id}`),
      ],
    })
    for (const id of ['team', 'history', 'about', 'blog', 'home', 'note']) {
      expect(state.content.get(id), id).toMatchObject(await ws.readJson(`content/${id}.json`))
    }
    await ws.expectClean()
  })

  it('moves and re-sorting locally change exactly the moved nodes', async () => {
    // history moves up under home, before blog; team stays where it is.
    await ws.writeJson('content/history.json', node('history', 'home', 2))
    await ws.writeJson('content/blog.json', node('blog', 'home', 3))
    await ws.ok('push')
    state = await expectOnly(up.api, state, { changed: ['content/history', 'content/blog'] })
    expect(state.content.get('history')).toMatchObject({ parentId: 'home', sort: 2 })
    expect(state.content.get('blog')).toMatchObject({ parentId: 'home', sort: 3 })
    await ws.expectClean()
  })

  it('a move the parent schema refuses fails by name and damages nothing', async () => {
    await ws.writeJson('content/team.json', node('team', 'note', 1))
    const push = await ws.cli('--json', 'push')
    expect(push.code).toBe(1)
    const failed = (push.json as { failed: Array<{ path: string; error: string }> }).failed
    expect(failed).toEqual([
      expect.objectContaining({
        path: 'content/team.json',
        error: expect.stringMatching(/not allowed here/),
      }),
    ])
    state = await expectOnly(up.api, state)
    await ws.writeJson('content/team.json', node('team', 'about', 1))
    await ws.expectClean()
  })

  it('schedule dates go up and come back, though the listing hides them', async () => {
    // The server finds schedule tasks by content id alone, across projects: the node gets an id
    // of this run, and its dates are cleared at the end, so no other project sees them.
    const id = `news-${up.project}`
    const path = `content/${id}.json`
    const publishOn = new Date(Date.now() + 30 * 86400_000).toISOString()
    const unpublishOn = new Date(Date.now() + 60 * 86400_000).toISOString()
    await ws.writeJson(path, { ...node(id, 'home', 4), publishOn, unpublishOn })
    await ws.ok('push')
    state = await expectOnly(up.api, state, { added: [`content/${id}`] })
    expect(await up.api.get('content', id)).toMatchObject({ publishOn, unpublishOn })
    // The server's listing says null for both; that is not an edit on the server.
    expect(state.content.get(id)).toMatchObject({ publishOn: null, unpublishOn: null })
    await ws.expectClean()
    // An unrelated edit of the node keeps its schedule.
    const file = await ws.readJson(path)
    await ws.writeJson(path, { ...file, sort: 5 })
    await ws.ok('push')
    state = await expectOnly(up.api, state, { changed: [`content/${id}`] })
    expect(await up.api.get('content', id)).toMatchObject({ publishOn, unpublishOn, sort: 5 })
    const status = await ws.ok('--json', 'status')
    expect((status.json as { scheduled?: unknown[] }).scheduled).toEqual([
      expect.objectContaining({ path, type: 'publish' }),
      expect.objectContaining({ path, type: 'unpublish' }),
    ])
    // Unscheduled again: both dates cleared on the server.
    await ws.writeJson(path, { ...file, sort: 5, publishOn: null, unpublishOn: null })
    await ws.ok('push')
    state = await expectOnly(up.api, state, { changed: [`content/${id}`] })
    expect(await up.api.get('content', id)).toMatchObject({ publishOn: null, unpublishOn: null })
    await ws.expectClean()
  })

  it('a multilingual edit on the server comes down with every language kept', async () => {
    const about = await up.api.get('content', 'about')
    const props = about.properties as Record<string, Record<string, unknown>>
    await up.api.put('content', {
      ...about,
      properties: { ...props, heading: { ...props.heading, de: 'Über uns' } },
    })
    state = await serverState(up.api)
    await ws.ok('pull')
    expect((await ws.readJson('content/about.json')).properties).toMatchObject({
      heading: { _multilingual: true, en: 'about (en)', de: 'Über uns' },
      body: { _multilingual: true, en: '<p>about</p>', de: '<p>about auf Deutsch</p>' },
    })
    state = await expectOnly(up.api, state)
    await ws.expectClean()
  })

  // Issue 13 item 4: the server fills createdBy with the writing user when the body
  // has none, so a push of someone else's node made the pusher its author.
  it('an edit pushed by cms-sync keeps the node’s author (issue 13 item 4)', async () => {
    const byAnn: Item = { ...node('by-ann', '', 3), createdBy: 'ann-user-id' } as Item
    await up.api.put('content', byAnn)
    await ws.ok('pull')
    state = await serverState(up.api)
    expect(state.content.get('by-ann')).toMatchObject({ createdBy: 'ann-user-id' })
    const file = await ws.readJson('content/by-ann.json')
    await ws.writeJson('content/by-ann.json', { ...file, sort: 4 })
    await ws.ok('push')
    state = await expectOnly(up.api, state, { changed: ['content/by-ann'] })
    expect(state.content.get('by-ann')).toMatchObject({ createdBy: 'ann-user-id', updatedBy: up.userId })
  })

  // Issue 13 item 3: the server keeps keys in the order sent and its editors show
  // fields in that order; a push of the canonical (sorted) file reordered them.
  it('a pushed schema edit keeps the order of its fields (issue 13 item 3)', async () => {
    const ordered = {
      ...SECTION,
      id: 'ordered',
      name: 'Ordered',
      fields: {
        properties: {
          title: { label: 'Title', schemaId: 'string', tabId: 'content' },
          body: { label: 'Body', schemaId: 'richText', tabId: 'content' },
          author: { label: 'Author', schemaId: 'string', tabId: 'content' },
        },
      },
    }
    await up.api.put('schemas', ordered as Item)
    await ws.ok('pull')
    const file = await ws.readJson('schemas/ordered.json')
    await ws.writeJson('schemas/ordered.json', { ...file, icon: 'star' })
    await ws.ok('push')
    const stored = (await up.api.get('schemas', 'ordered')) as unknown as { fields: { properties: object } }
    expect(Object.keys(stored.fields.properties)).toEqual(['title', 'body', 'author'])
  })

  // The server takes a parent's delete and nulls its children's parentId: a delete that would
  // orphan children is refused by cms-sync before anything is sent, naming them.
  it('a parent deleted locally while it has children is refused (exit 4), the tree stays', async () => {
    await ws.expectClean()
    const before = await serverState(up.api)
    const children = [...before.content.values()]
      .filter((item) => item.parentId === 'about')
      .map((item) => `content/${item.id}.json`)
      .sort()
    expect(children.length).toBeGreaterThan(0)
    const about = await ws.read('content/about.json')
    await rm(path.join(ws.root, 'content/about.json'))
    for (const args of [['push'], ['sync'], ['push', '--allow-deletes']]) {
      const run = await ws.cli(...args)
      expect(run.code, args.join(' ')).toBe(4)
      expect(run.stderr, args.join(' ')).toContain(
        `leave its children without a parent (the server moves them to the root): ${children.join(', ')}`,
      )
    }
    await expectOnly(up.api, before, {})
    await ws.write('content/about.json', about)
    await ws.expectClean()
  })

  // Issue 13 item 2: deleting a parent on the server moves its children to the root
  // (parentId null) without touching their updateDate; the workspace must follow.
  it('a parent deleted on the server leaves its children at the root locally (issue 13 item 2)', async () => {
    await ws.expectClean()
    await up.api.remove('content', 'about')
    await ws.ok('pull')
    await expect(ws.read('content/about.json')).rejects.toThrow(/ENOENT/)
    for (const id of ['team']) expect((await ws.readJson(`content/${id}.json`)).parentId ?? '').toBe('')
    await ws.expectClean()
    // The child can still be edited and pushed.
    const team = await ws.readJson('content/team.json')
    await ws.writeJson('content/team.json', { ...team, sort: 7 })
    await ws.ok('push')
    await ws.expectClean()
  })
})
