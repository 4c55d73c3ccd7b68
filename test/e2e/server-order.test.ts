// Key order is what editors see: the server's UI shows schema fields, tabs and form inputs in
// the order it stores them (upstream keeps the order a write sends). Files keep that order, a
// reorder on either side is a change, and a write never rewrites what the server owns and the
// file does not hold (createdBy). Issue 13, items 3 and 4.

import { afterEach, describe, expect, test } from 'vitest'
import { SECTION_SCHEMA, startWorld, type World } from '../helpers/sync-world.js'

const DIALECTS = ['spec', 'upstream'] as const
let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

type Obj = Record<string, unknown>
const field = (label: string, tabId = 'content') => ({ label, schemaId: 'string', tabId })

/** A schema whose fields and tabs are deliberately not in alphabetical order. */
const ARTICLE = {
  ...SECTION_SCHEMA,
  id: 'article',
  name: 'Article',
  tabs: { zeta: 'Zeta', content: 'Content', alpha: 'Alpha' },
  fields: { properties: { title: field('Title'), body: field('Body'), author: field('Author', 'alpha') } },
}
const CONTACT = {
  id: 'contact',
  title: 'Contact',
  inputs: { zname: { type: 'text' }, email: { type: 'email' }, age: { type: 'number' } },
}

const keysAt = (value: unknown, ...path: string[]): string[] =>
  Object.keys(path.reduce<Obj>((node, key) => node[key] as Obj, value as Obj))
const fieldOrder = (schema: unknown) => keysAt(schema, 'fields', 'properties')
const tabOrder = (schema: unknown) => keysAt(schema, 'tabs')
const inputOrder = (form: unknown) => keysAt(form, 'inputs')

describe.each(DIALECTS)('%s: key order', (dialect) => {
  test('a push keeps the file order of fields, tabs and inputs on the server and in the file', async () => {
    world = await startWorld(dialect, { resources: ['schemas', 'content', 'forms'] })
    const w = world
    expect((await w.cli('sync')).exitCode).toBe(0)
    await w.writeJson('schemas/article.json', ARTICLE)
    await w.writeJson('forms/contact.json', CONTACT)
    const first = await w.cli('push')
    expect(first.exitCode, first.stdout + first.stderr).toBe(0)

    const check = async () => {
      const schema = await w.server.get('schema', 'article')
      expect(fieldOrder(schema)).toEqual(['title', 'body', 'author'])
      expect(tabOrder(schema)).toEqual(['zeta', 'content', 'alpha'])
      expect(inputOrder(await w.server.get('form', 'contact'))).toEqual(['zname', 'email', 'age'])
      const file = await w.readJson('schemas/article.json')
      expect(fieldOrder(file)).toEqual(['title', 'body', 'author'])
      expect(tabOrder(file)).toEqual(['zeta', 'content', 'alpha'])
      expect(inputOrder(await w.readJson('forms/contact.json'))).toEqual(['zname', 'email', 'age'])
    }
    await check()
    // A later edit of something else sends the order again, unchanged.
    await w.editJson('schemas/article.json', { name: 'Article (edited)' })
    await w.editJson('forms/contact.json', { title: 'Contact us' })
    const second = await w.cli('push')
    expect(second.exitCode, second.stdout + second.stderr).toBe(0)
    await check()
    expect((await w.server.get('schema', 'article'))?.name).toBe('Article (edited)')
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])
  })

  test('a reorder is a change on either side: a remote one is pulled, a local one pushed', async () => {
    world = await startWorld(dialect, { resources: ['schemas', 'content', 'forms'] })
    const w = world
    await w.server.put('schema', 'article', ARTICLE)
    await w.server.put('form', 'contact', CONTACT)
    expect((await w.cli('sync')).exitCode).toBe(0)
    expect(fieldOrder(await w.readJson('schemas/article.json'))).toEqual(['title', 'body', 'author'])
    expect(inputOrder(await w.readJson('forms/contact.json'))).toEqual(['zname', 'email', 'age'])

    // Someone drags fields and inputs around in the server's UI.
    const { author, title, body } = ARTICLE.fields.properties
    await w.server.put('schema', 'article', { ...ARTICLE, fields: { properties: { author, title, body } } })
    const { zname, email, age } = CONTACT.inputs
    await w.server.put('form', 'contact', { ...CONTACT, inputs: { age, zname, email } })
    const remote = await w.cli('--json', 'status')
    expect(remote.json.changes).toEqual([
      expect.objectContaining({ path: 'forms/contact.json', remote: 'modified', action: 'pull' }),
      expect.objectContaining({ path: 'schemas/article.json', remote: 'modified', action: 'pull' }),
    ])
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(fieldOrder(await w.readJson('schemas/article.json'))).toEqual(['author', 'title', 'body'])
    expect(inputOrder(await w.readJson('forms/contact.json'))).toEqual(['age', 'zname', 'email'])

    // And someone reorders the tabs in the file.
    const file = await w.readJson('schemas/article.json')
    await w.writeJson('schemas/article.json', {
      ...file,
      tabs: { alpha: 'Alpha', zeta: 'Zeta', content: 'Content' },
    })
    const local = await w.cli('--json', 'status')
    expect(local.json.changes).toEqual([
      expect.objectContaining({ path: 'schemas/article.json', local: 'modified', action: 'push' }),
    ])
    expect((await w.cli('push')).exitCode).toBe(0)
    const schema = await w.server.get('schema', 'article')
    expect(tabOrder(schema)).toEqual(['alpha', 'zeta', 'content'])
    expect(fieldOrder(schema)).toEqual(['author', 'title', 'body'])
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])
  })
})

describe.each(DIALECTS)('%s: what the server owns', (dialect) => {
  test('a push keeps createdBy (and the rest the file does not hold) as the server has it', async () => {
    world = await startWorld(dialect, { content: ['home'] })
    const w = world
    const home = await w.server.get('content', 'home')
    await w.server.put('content', 'home', { ...home, createdBy: 'alice' })
    expect((await w.server.get('content', 'home'))?.createdBy).toBe('alice')
    expect((await w.cli('sync')).exitCode).toBe(0)
    expect(await w.readJson('content/home.json')).not.toHaveProperty('createdBy')

    await w.editJson('content/home.json', { properties: { title: 'Edited' } })
    const push = await w.cli('push')
    expect(push.exitCode, push.stdout + push.stderr).toBe(0)
    const after = await w.server.get('content', 'home')
    expect(after).toMatchObject({ createdBy: 'alice', properties: { title: 'Edited' } })
    expect(after?.createDate).toBe(home?.createDate)
  })
})
