// Every endpoint group over real HTTP, in both dialects, as a client of the API would use it.

import { describe, expect, it } from 'vitest'
import { call, client, DIALECTS, login, start } from './helpers.js'

const HEX16 = /^[0-9a-f]{16}$/

describe.each(DIALECTS)('%s dialect', (dialect) => {
  const bad = dialect === 'spec' ? 400 : 404

  async function setup(options: { now?: () => number } = {}) {
    const emu = await start({ dialect, ...options })
    const token = await login(emu)
    return { emu, token, api: client(emu, token) }
  }

  /** A full content body, as a careful client sends it (§11). */
  const node = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    parentId: '',
    schemaId: 'section',
    sort: 0,
    isPublished: false,
    publishOn: null,
    unpublishOn: null,
    createDate: '2026-01-01T00:00:00.000Z',
    properties: { title: id },
    settings: { publishing: { connectionId: '' } },
    ...extra,
  })
  const sectionSchema = {
    id: 'section',
    name: 'Section',
    type: 'content',
    parentSchemaId: 'page',
    allowedChildSchemas: ['section'],
  }

  it('logs in with a 40-hex token and a cookie, and GET /api/user shows the user without secrets', async () => {
    const emu = await start({ dialect })
    const res = await call(emu, 'POST', '/api/user/login?persist=true', {
      body: { username: 'admin', password: 'admin' },
    })
    expect(res.status).toBe(200)
    expect(res.text).toMatch(/^[0-9a-f]{40}$/)
    expect(res.headers.get('set-cookie')).toContain(`token=${res.text}`)
    const me = await call(emu, 'GET', '/api/user', { token: res.text })
    expect(me.status).toBe(200)
    expect(me.json()).toMatchObject({ username: 'admin', isAdmin: true })
    expect(me.json().password).toBeUndefined()
    expect(me.text).not.toContain(res.text)
  })

  it('creates, reads, lists, updates and deletes content with server-owned fields set', async () => {
    const { emu, api } = await setup()
    expect((await api.post('P/schemas/section?create=true', sectionSchema)).status).toBe(200)
    const created = await api.post('P/content/home?create=true', node('home'))
    expect(created.status).toBe(200)
    const home = created.json()
    const admin = emu.users.byName('admin')!
    expect(home).toMatchObject({ id: 'home', updatedBy: admin.id, createdBy: admin.id, isLocked: false })
    expect(home.sync).toEqual({ isRemote: false, hasRemote: false })
    expect(home.sort).toBeGreaterThan(0)
    expect(Date.parse(home.updateDate)).toBeGreaterThan(Date.now() - 5000)
    await api.post('P/content/child?create=true', node('child', { parentId: 'home', sort: 5 }))
    const list = (await api.get('P/content')).json()
    expect(list.map((c: { id: string }) => c.id)).toEqual(['home', 'child'])
    const got = (await api.get('P/content/child')).json()
    expect(got).toMatchObject({ id: 'child', parentId: 'home', sort: 5, properties: { title: 'child' } })

    const updated = (
      await api.post(
        'P/content/child',
        node('child', { parentId: 'home', sort: 5, properties: { title: 'new' } }),
      )
    ).json()
    expect(updated.properties).toEqual({ title: 'new' })
    expect(updated.updateDate >= got.updateDate).toBe(true)

    const refused = await api.post(
      'P/content/odd?create=true',
      node('odd', { parentId: 'home', schemaId: 'page' }),
    )
    expect(refused.status).toBe(bad)
    expect(refused.text).toBe('This type of content is not allowed here')

    const missingParent = await api.post('P/content/lost?create=true', node('lost', { parentId: 'nowhere' }))
    expect(missingParent.status).toBe(404)
    expect(missingParent.text).toContain('nowhere')

    expect((await api.del('P/content/child')).status).toBe(200)
    expect((await api.get('P/content/child')).status).toBe(404)
    expect((await api.get('P/content/child')).text).toBe('Content by id "child" was not found')
  })

  it('makes new content, inserts it at a position and creates the example', async () => {
    const { api } = await setup()
    await api.post('P/schemas/section?create=true', sectionSchema)
    const a = (await api.post('P/content/new?schemaId=section', { title: 'A' })).json()
    expect(a.id).toMatch(HEX16)
    expect(a.properties).toEqual({ title: 'A' })
    const b = (await api.post('P/content/new?schemaId=section', { properties: { title: 'B' } })).json()
    expect(b.properties).toEqual({ title: 'B' })
    const missing = await api.post('P/content/new', {})
    expect(missing.status).toBe(bad)
    expect(missing.text).toBe('Parameter "schemaId" is required')

    expect((await api.post(`P/content/insert?contentId=${b.id}&parentId=&position=0`)).text).toBe('OK')
    const order = (await api.get('P/content')).json().map((c: { id: string }) => c.id)
    expect(order).toEqual([b.id, a.id])
    const noParent = await api.post(`P/content/insert?contentId=${b.id}`)
    expect(noParent.status).toBe(bad)

    expect((await api.post('P/content/example')).text).toBe('OK')
    const schemas = (await api.get('P/schemas')).json()
    expect(schemas.some((s: { name: string }) => s.name === 'Example Page')).toBe(true)
    expect((await api.get('P/content')).json()).toHaveLength(3)
  })

  it('deletes content with its children when asked', async () => {
    const { api } = await setup()
    await api.post('P/schemas/section?create=true', sectionSchema)
    await api.post('P/content/a?create=true', node('a'))
    await api.post('P/content/b?create=true', node('b', { parentId: 'a' }))
    await api.post('P/content/c?create=true', node('c', { parentId: 'b' }))
    expect((await api.del('P/content/a?removeChildren=true')).status).toBe(200)
    const left = (await api.get('P/content')).json().map((c: { id: string }) => c.id)
    // Upstream removes direct children only (§6.2); spec removes the whole subtree.
    expect(left).toEqual(dialect === 'spec' ? [] : ['c'])
  })

  it('lists native schemas first, locked, and writes, renames-by-parent and deletes custom ones', async () => {
    const { api } = await setup()
    const list = (await api.get('P/schemas')).json()
    expect(list[0].id).toBe('contentBase')
    expect(list.find((s: { id: string }) => s.id === 'string')).toMatchObject({
      type: 'field',
      isLocked: true,
    })
    const made = (await api.post('P/schemas/new?parentSchemaId=page')).json()
    expect(made).toMatchObject({ type: 'content', parentSchemaId: 'page' })
    expect(made.id).toMatch(HEX16)
    await api.post('P/schemas/child?create=true', {
      id: 'child',
      type: 'content',
      name: 'Child',
      parentSchemaId: made.id,
    })
    const field = (
      await api.post('P/schemas/color?create=true', { id: 'color', type: 'field', editorId: 'color' })
    ).json()
    expect(field.editorId).toBe('ColorEditor')
    const badType = await api.post('P/schemas/x?create=true', { id: 'x', type: 'nope' })
    expect(badType.status).toBe(bad)
    expect(badType.text).toContain('Schema data is incorrectly formatted')
    expect((await api.get('P/schemas/page')).json()).toMatchObject({ id: 'page', isLocked: true })
    expect((await api.get('P/schemas/nope')).status).toBe(404)
    const deleted = await api.del(`P/schemas/${made.id}`)
    expect(deleted.text).toBe(`Schema with id "${made.id}" deleted successfully`)
    expect((await api.get('P/schemas/child')).json().parentSchemaId).toBe('page')
  })

  it('serves connections with deployers and processors', async () => {
    const { api } = await setup()
    expect((await api.get('P/connections/deployers')).json()).toEqual({
      api: 'API',
      filesystem: 'File system',
      git: 'Git',
    })
    expect((await api.get('P/connections/processors')).json()).toEqual({
      json: 'JSON',
      uischema: 'uischema.org',
    })
    const made = (await api.post('P/connections/new')).json()
    expect(made).toMatchObject({ title: 'New connection' })
    const written = (
      await api.post('P/connections/site?create=true', {
        id: 'site',
        title: 'Site',
        url: 'https://example.com',
        processor: { alias: 'json' },
        deployer: {
          alias: 'git',
          title: 'whatever',
          repo: 'r',
          password: 'p',
          paths: { media: 'm', content: 'c' },
        },
      })
    ).json()
    expect(written.deployer).toMatchObject({
      alias: 'git',
      title: 'Git',
      repo: 'r',
      password: 'p',
      paths: { media: 'm', content: 'c' },
    })
    expect(written.processor).toEqual({ name: 'JsonProcessor', alias: 'json', fileExtension: '.json' })
    expect((await api.get('P/connections/site')).json().title).toBe('Site')
    expect((await api.get('P/connections')).json()).toHaveLength(2)
    expect((await api.del('P/connections/site')).status).toBe(200)
    expect((await api.get('P/connections/site')).status).toBe(404)
  })

  it('handles forms: write, entries as CSV, public submit with CORS and redirect, clear, delete', async () => {
    // Upstream turns away a second submission from one address within a second: its clock moves on.
    let clock = Date.now()
    const { emu, api } = await setup({ now: () => clock })
    const form = {
      id: 'contact',
      title: 'Contact us',
      allowedOrigin: 'https://site.example',
      redirect: '',
      appendRedirect: false,
      inputs: { email: { type: 'text', required: true, pattern: '@' }, note: { type: 'text' } },
    }
    expect((await api.post('P/forms/contact?create=true', form)).status).toBe(200)
    const P = api.P
    const preflight = await call(emu, 'OPTIONS', `${P}/forms/contact/submit`, {
      headers: { origin: 'https://site.example' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://site.example')
    const sent = await call(emu, 'POST', `${P}/forms/contact/submit`, {
      raw: 'email=a%40b.c&note=hi%20"there"&extra=dropped',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://site.example' },
    })
    expect(sent.status).toBe(dialect === 'spec' ? 200 : 404)
    expect(sent.headers.get('access-control-allow-origin')).toBe('https://site.example')
    const stored = (await api.get('P/forms/contact')).json()
    expect(stored.entries).toHaveLength(1)
    expect(stored.entries[0]).toMatchObject({ email: 'a@b.c', note: 'hi "there"' })
    expect(stored.entries[0].extra).toBeUndefined()

    const wrongOrigin = await call(emu, 'POST', `${P}/forms/contact/submit`, {
      body: { email: 'x@y' },
      headers: { origin: 'https://evil.example' },
    })
    expect(wrongOrigin.status).toBe(dialect === 'spec' ? 403 : 400)

    const csv = await api.get('P/forms/contact/entries')
    expect(csv.headers.get('content-type')).toContain('text/csv')
    expect(csv.headers.get('content-disposition')).toMatch(/attachment; filename=Contact-us_.*\.csv/)
    const [header, row] = csv.text.split('\r\n')
    expect(header).toBe('"email","note","time"')
    expect(row).toContain(dialect === 'spec' ? '"hi ""there"""' : '"hi "there""')

    await api.post('P/forms/contact', { ...form, redirect: '/thanks', appendRedirect: true })
    clock += 1000
    const redirected = await call(emu, 'POST', `${P}/forms/contact/submit`, {
      body: { email: 'c@d' },
      headers: { referer: 'https://site.example/contact' },
    })
    expect(redirected.status).toBe(302)
    expect(redirected.headers.get('location')).toBe('https://site.example/contact/thanks')
    clock += 1000
    const invalid = await call(emu, 'POST', `${P}/forms/contact/submit`, { body: { email: 'no-at-sign' } })
    expect(invalid.status).toBe(bad)

    expect((await api.post('P/forms/clear/contact')).text).toBe('OK')
    expect((await api.get('P/forms/contact')).json().entries).toEqual([])
    expect((await api.post('P/forms/new')).json().title).toBe('New form')
    expect((await api.get('P/forms')).json()).toHaveLength(2)
    expect((await api.del('P/forms/contact')).text).toBe('Form with id "contact" deleted successfully')
  })

  it('keeps project and environment settings and lists environments', async () => {
    const { api } = await setup()
    expect((await api.get('/api/demo/environments')).json()).toEqual(['live'])
    expect((await api.get('/api/demo/settings/languages')).json()).toEqual(['en'])
    expect((await api.post('/api/demo/settings/languages', ['en', 'de'])).json()).toEqual(['en', 'de'])
    expect((await api.get('/api/demo/settings')).json()).toMatchObject({
      languages: ['en', 'de'],
      info: { name: 'demo' },
    })
    await api.post('P/settings/providers', { media: 'site' })
    expect((await api.get('P/settings')).json()).toEqual({ providers: { media: 'site' } })
    expect((await api.get('P/settings/missing')).json()).toEqual({})
  })

  it('runs the Server group: projects, environments, migrate, delete', async () => {
    const { api } = await setup()
    const made = (await api.post('/api/server/projects/new', { name: 'Second' })).json()
    expect(made).toMatchObject({ settings: { info: { name: 'Second' } }, environments: ['live'] })
    expect((await api.get('/api/server/projects?ids=true')).json()).toEqual(['demo', made.id])
    expect((await api.get(`/api/server/projects/${made.id}`)).json().id).toBe(made.id)
    expect((await api.put(`/api/server/projects/${made.id}/staging`)).status).toBe(200)
    expect((await api.get(`/api/server/${made.id}/environments`)).json()).toEqual(['live', 'staging'])
    const P2 = `/api/${made.id}`
    await api.post(`${P2}/live/forms/f?create=true`, { id: 'f', title: 'F' })
    expect(
      (
        await api.post(`/api/server/migrate/${made.id}`, {
          from: 'live',
          to: 'staging',
          settings: { forms: true },
        })
      ).status,
    ).toBe(200)
    expect((await api.get(`${P2}/staging/forms/f`)).json().title).toBe('F')
    expect((await api.del(`/api/server/projects/${made.id}/staging`)).status).toBe(200)
    expect((await api.get(`${P2}/environments`)).json()).toEqual(['live'])
    expect((await api.del(`/api/server/projects/${made.id}`)).status).toBe(200)
    expect((await api.get('/api/server/projects?ids=true')).json()).toEqual(['demo'])
  })

  it('passes its own self-test', async () => {
    const { api } = await setup()
    const res = await api.post('/api/test')
    expect(res.status).toBe(200)
    expect(res.text).toContain('All tests passed')
    expect((await api.get('/api/server/projects?ids=true')).json()).toEqual(['demo'])
  })

  it('manages users: list, new, get, update, delete; first only on an empty server; logout ends the token', async () => {
    const { emu, api, token } = await setup()
    const made = (await api.post('/api/users/new', { username: 'ed', password: 'pw', fullName: 'Ed' })).json()
    expect(made).toMatchObject({ username: 'ed', isAdmin: false })
    expect(made.password).toBeUndefined()
    const list = (await api.get('/api/users')).json()
    expect(list.map((u: { username: string }) => u.username).sort()).toEqual(['admin', 'ed'])
    expect((await api.get(`/api/users/${made.id}`)).json().username).toBe('ed')
    expect((await api.post(`/api/users/${made.id}`, { fullName: 'Edward' })).status).toBe(200)
    expect((await api.get(`/api/users/${made.id}`)).json().fullName).toBe('Edward')
    const edToken = await login(emu, 'ed', 'pw')
    expect((await call(emu, 'GET', '/api/user/scopes', { token: edToken })).json()).toEqual({})
    expect((await api.del(`/api/users/${made.id}`)).status).toBe(200)
    expect((await call(emu, 'GET', '/api/user', { token: edToken })).status).toBeGreaterThanOrEqual(400)
    expect(
      (await call(emu, 'POST', '/api/users/first', { body: { username: 'x', password: 'y' } })).status,
    ).toBe(403)
    const out = await call(emu, 'POST', '/api/user/logout', { token })
    expect(out.status).toBe(302)
    expect((await call(emu, 'GET', '/api/user', { token })).status).toBeGreaterThanOrEqual(400)
  })
})
