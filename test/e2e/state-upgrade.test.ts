// A workspace synced by a version that sorted every file's keys (state version 1) meets this
// one, which keeps the server's order: no false change, no false conflict, no push that
// reorders the server; real edits on either side still go through, and every file ends up in
// the server's order.

import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { SECTION_SCHEMA, startWorld, type World } from '../helpers/sync-world.js'

const DIALECTS = ['spec', 'upstream'] as const
let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

type Obj = Record<string, unknown>
const field = (label: string) => ({ label, schemaId: 'string', tabId: 'content' })
const ARTICLE = {
  ...SECTION_SCHEMA,
  id: 'article',
  name: 'Article',
  tabs: { zeta: 'Zeta', content: 'Content' },
  fields: { properties: { title: field('Title'), body: field('Body'), author: field('Author') } },
}
const CONTACT = { id: 'contact', title: 'Contact', inputs: { zname: {}, email: {}, age: {} } }

/** The file form the old version wrote: keys sorted at every depth (its canonicalJson). */
function oldForm(value: unknown): string {
  const sorter = (_key: string, v: unknown) =>
    v === null || typeof v !== 'object' || Array.isArray(v)
      ? v
      : Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Obj)[k]]),
        )
  return `${JSON.stringify(value, sorter, 2)}\n`
}
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** Turns a synced workspace into what the old version left: sorted files, a version-1 state. */
async function downgrade(w: World): Promise<void> {
  const statePath = w.file('.cms-sync/state.json')
  const state = JSON.parse(await readFile(statePath, 'utf8'))
  for (const folder of ['schemas', 'content', 'forms']) {
    for (const name of await readdir(w.file(folder)).catch(() => [])) {
      const rel = `${folder}/${name}`
      const text = oldForm(await w.readJson(rel))
      await writeFile(w.file(rel), text)
      const item = state.items[rel]
      item.baseHash = sha256(text)
      item.remoteRev =
        item.kind === 'content' ? (await w.server.get('content', item.id))?.updateDate : sha256(text)
      delete item.stat
    }
  }
  await writeFile(statePath, JSON.stringify({ ...state, version: 1 }))
  // The sorted-keys version wrote no cms-sync.lock.
  await rm(w.file('cms-sync.lock'), { force: true })
}

const keysAt = (value: unknown, ...path: string[]) =>
  Object.keys(path.reduce<Obj>((node, key) => node[key] as Obj, value as Obj))

describe.each(DIALECTS)('%s: a workspace of the sorted-keys version', (dialect) => {
  test('shows only real edits, pushes them in the server order, and rewrites files in it', async () => {
    world = await startWorld(dialect, { resources: ['schemas', 'content', 'forms'] })
    const w = world
    await w.server.put('schema', 'article', ARTICLE)
    await w.server.put('form', 'contact', CONTACT)
    expect((await w.cli('sync')).exitCode).toBe(0)
    await downgrade(w)
    expect(keysAt(await w.readJson('schemas/article.json'), 'fields', 'properties')).toEqual([
      'author',
      'body',
      'title',
    ])

    const idle = await w.cli('--json', 'status')
    expect(idle.exitCode, idle.stderr).toBe(0)
    expect(idle.json.changes).toEqual([])

    // One edit on each side, made after the upgrade: in the sorted file, and on the server.
    await w.editJson('schemas/article.json', { name: 'Article (edited)' })
    await w.setContent('news', { properties: { title: 'News from the server' } })
    const status = await w.cli('--json', 'status')
    expect(status.json.changes).toEqual([
      expect.objectContaining({ path: 'content/news.json', local: 'unchanged', action: 'pull' }),
      expect.objectContaining({ path: 'schemas/article.json', remote: 'unchanged', action: 'push' }),
    ])

    const before = w.proxy.seen.length
    const sync = await w.cli('--json', 'sync')
    expect(sync.exitCode, sync.stderr).toBe(0)
    expect(sync.json.conflicts).toEqual([])
    const writes = w.proxy.seen.slice(before).filter((call) => call.startsWith('POST'))
    expect(writes).toEqual([expect.stringMatching(/^POST \/api\/demo\/live\/schemas\/article$/)])
    const schema = await w.server.get('schema', 'article')
    expect(schema?.name).toBe('Article (edited)')
    expect(keysAt(schema, 'fields', 'properties')).toEqual(['title', 'body', 'author'])
    expect(keysAt(schema, 'tabs')).toEqual(['zeta', 'content'])

    // Every file now has the server's order, and the state is of today's version.
    expect(keysAt(await w.readJson('schemas/article.json'), 'fields', 'properties')).toEqual([
      'title',
      'body',
      'author',
    ])
    expect(keysAt(await w.readJson('forms/contact.json'), 'inputs')).toEqual(['zname', 'email', 'age'])
    expect(Object.keys(await w.readJson('content/home.json'))[0]).toBe('id')
    expect(await w.readJson('content/news.json')).toMatchObject({
      properties: { title: 'News from the server' },
    })
    const state = JSON.parse(await readFile(w.file('.cms-sync/state.json'), 'utf8'))
    expect(state.version).toBe(2)
    expect(Object.values(state.items).filter((item) => (item as Obj).sortedBase)).toEqual([])
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])

    // From now on a remote reorder is seen.
    await w.server.put('form', 'contact', { ...CONTACT, inputs: { age: {}, zname: {}, email: {} } })
    expect((await w.cli('--json', 'status')).json.changes).toEqual([
      expect.objectContaining({ path: 'forms/contact.json', action: 'pull' }),
    ])
  })

  test('an item edited on both sides merges field by field, its sorted-keys base found in git by value', async () => {
    world = await startWorld(dialect, { resources: ['schemas', 'content', 'forms'] })
    const w = world
    await w.server.put('schema', 'article', ARTICLE)
    expect((await w.cli('sync')).exitCode).toBe(0)
    await downgrade(w)
    // The old version kept no bases; what it synced is committed in git, in its sorted form.
    await rm(w.file('.cms-sync/bases'), { recursive: true, force: true })
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {
        cwd: w.root,
        stdio: 'pipe',
      })
    await writeFile(w.file('.gitignore'), '.cms-sync/\n')
    git('init', '-q')
    git('add', '-A')
    git('commit', '-qm', 'synced by the sorted-keys version')
    // Different leaves on each side: a schema's name in the file, a field's label on the server;
    // a content title in the file, its sort order on the server.
    await w.editJson('schemas/article.json', { name: 'Article (file)' })
    const schema = (await w.server.get('schema', 'article')) as Obj & { fields: { properties: Obj } }
    const properties = { ...schema.fields.properties, body: field('Body (server)') }
    await w.server.put('schema', 'article', { ...schema, fields: { ...schema.fields, properties } })
    const news = await w.readJson('content/news.json')
    await w.editJson('content/news.json', {
      properties: { ...(news.properties as Obj), title: 'News (file)' },
    })
    await w.setContent('news', { sort: 9 })

    const status = await w.cli('--json', 'status')
    expect(status.exitCode, JSON.stringify(status.json)).toBe(0)
    expect(status.json.changes).toEqual([
      expect.objectContaining({ path: 'content/news.json', action: 'merge' }),
      expect.objectContaining({ path: 'schemas/article.json', action: 'merge' }),
    ])
    const sync = await w.cli('--json', 'sync')
    expect(sync.exitCode, sync.stderr + sync.stdout).toBe(0)
    for (const doc of [await w.readJson('content/news.json'), await w.server.get('content', 'news')])
      expect(doc).toMatchObject({ sort: 9, properties: { title: 'News (file)' } })
    for (const doc of [await w.readJson('schemas/article.json'), await w.server.get('schema', 'article')]) {
      expect(doc).toMatchObject({
        name: 'Article (file)',
        fields: { properties: { body: { label: 'Body (server)' } } },
      })
      // The server's order, not the sorted one
      expect(keysAt(doc, 'fields', 'properties')).toEqual(['title', 'body', 'author'])
    }
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])
  })

  test('a file edited on both sides before the upgrade is one conflict; nothing else moves', async () => {
    world = await startWorld(dialect, { resources: ['schemas', 'content', 'forms'] })
    const w = world
    expect((await w.cli('sync')).exitCode).toBe(0)
    await downgrade(w)
    await w.editJson('content/home.json', { properties: { title: 'Local title' } })
    await w.setContent('home', { properties: { title: 'Remote title' } })
    const status = await w.cli('--json', 'status')
    expect(status.json.changes).toEqual([
      expect.objectContaining({ path: 'content/home.json', action: 'conflict' }),
    ])
    const sync = await w.cli('--json', 'sync')
    expect(sync.exitCode).toBe(3)
    expect(await w.readJson('content/home.json')).toMatchObject({ properties: { title: 'Local title' } })
    expect((await w.server.get('content', 'home'))?.properties).toEqual({ title: 'Remote title' })
  })
})
