// Where the dialects differ (docs/api-dialects.md, "Where they differ"), auth failures, and
// bad bodies: each as a client would meet it.

import { describe, expect, it } from 'vitest'
import { call, client, login, start } from './helpers.js'

const content = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  parentId: '',
  schemaId: 'sec',
  sort: 1,
  createDate: '2025-05-05T00:00:00.000Z',
  properties: {},
  ...extra,
})

describe('auth', () => {
  it('spec: 401 without or with a bad token, accepts cookie, ?token= and Bearer, 403 for non-admins', async () => {
    const emu = await start({
      users: [
        { username: 'admin', password: 'admin', isAdmin: true },
        { username: 'eve', password: 'pw', isAdmin: false },
      ],
    })
    const token = await login(emu)
    expect((await call(emu, 'GET', '/api/demo/live/content')).status).toBe(401)
    expect((await call(emu, 'GET', '/api/demo/live/content', { token: 'f'.repeat(40) })).status).toBe(401)
    for (const via of ['cookie', 'query', 'bearer'] as const) {
      expect((await call(emu, 'GET', '/api/demo/live/content', { token, via })).status).toBe(200)
    }
    expect((await call(emu, 'GET', '/api/user', { token, via: 'bearer' })).status).toBe(200)
    const eve = await login(emu, 'eve', 'pw')
    expect((await call(emu, 'GET', '/api/demo/live/content', { token: eve })).status).toBe(200)
    for (const [method, path] of [
      ['GET', '/api/config/database'],
      ['GET', '/api/users'],
      ['POST', '/api/server/projects/new'],
    ] as const) {
      const res = await call(emu, method, path, {
        token: eve,
        body: method === 'POST' ? { name: 'x' } : undefined,
      })
      expect(res.status).toBe(403)
      expect(res.text).toBe('You need to be admin to do that')
    }
    const noUser = await call(emu, 'POST', '/api/user/login', { body: { username: 'nobody', password: 'x' } })
    expect(noUser.status).toBe(401)
    const wrong = await call(emu, 'POST', '/api/user/login', {
      body: { username: 'admin', password: 'nope' },
    })
    expect([wrong.status, wrong.text]).toEqual([401, 'Invalid password'])
  })

  it('spec: a non-persistent token expires after 8 hours, a persistent one does not', async () => {
    let clock = Date.now()
    const emu = await start({ now: () => clock })
    const shortToken = await login(emu)
    const longToken = (
      await call(emu, 'POST', '/api/user/login?persist=true', {
        body: { username: 'admin', password: 'admin' },
      })
    ).text
    clock += 8 * 3600 * 1000 + 1000
    expect((await call(emu, 'GET', '/api/user', { token: shortToken })).status).toBe(401)
    expect((await call(emu, 'GET', '/api/user', { token: longToken })).status).toBe(200)
  })

  it('upstream: anonymous reads pass, content writes fail with the null-user 404, Bearer is ignored', async () => {
    const emu = await start({
      dialect: 'upstream',
      users: [
        { username: 'admin', password: 'admin', isAdmin: true },
        { username: 'eve', password: 'pw', isAdmin: false },
      ],
    })
    const token = await login(emu)
    expect((await call(emu, 'GET', '/api/demo/live/content')).status).toBe(200)
    const write = await call(emu, 'POST', '/api/demo/live/content/a?create=true', { body: content('a') })
    expect([write.status, write.text]).toEqual([404, "Cannot read properties of null (reading 'id')"])
    expect((await call(emu, 'POST', '/api/demo/live/forms/new')).status).toBe(200)
    expect((await call(emu, 'GET', '/api/user', { token, via: 'bearer' })).status).toBe(403)
    expect((await call(emu, 'GET', '/api/user', { token, via: 'query' })).status).toBe(403)
    expect((await call(emu, 'GET', '/api/user', { token })).status).toBe(200)
    const eve = await login(emu, 'eve', 'pw')
    const admin = await call(emu, 'POST', '/api/demo/settings/info', { token: eve, body: { name: 'x' } })
    expect([admin.status, admin.text]).toEqual([400, 'You need to be admin to do that'])
    const noUser = await call(emu, 'POST', '/api/user/login', { body: { username: 'nobody', password: 'x' } })
    expect([noUser.status, noUser.text]).toEqual([403, 'No user "nobody" found'])
    const wrong = await call(emu, 'POST', '/api/user/login', { body: { username: 'admin', password: 'x' } })
    expect([wrong.status, wrong.text]).toEqual([403, 'Invalid password'])
  })

  it('unknown project or environment: 404 in spec, 400 in upstream, same text', async () => {
    for (const [dialect, status] of [
      ['spec', 404],
      ['upstream', 400],
    ] as const) {
      const emu = await start({ dialect })
      const token = await login(emu)
      const res = await call(emu, 'GET', '/api/nope/live/content', { token })
      expect([res.status, res.text]).toEqual([status, 'Project "nope" could not be found'])
      const env = await call(emu, 'GET', '/api/demo/nope/content', { token })
      expect([env.status, env.text]).toEqual([status, 'Environment "nope" was not found for project "demo"'])
    }
  })
})

describe('bad bodies', () => {
  it('spec: not JSON, no JSON content type, wrong types, missing fields, wrong id: 400 with a message', async () => {
    const emu = await start()
    const api = client(emu, await login(emu))
    const notJson = await api.post('P/content/a?create=true', undefined, {
      raw: '{nope',
      headers: { 'content-type': 'application/json' },
    })
    expect(notJson.status).toBe(400)
    expect(notJson.text).toMatch(/not valid JSON/)
    const noType = await api.post('P/content/a?create=true', undefined, { raw: JSON.stringify(content('a')) })
    expect(noType.status).toBe(400)
    expect(noType.text).toMatch(/Content-Type: application\/json/)
    const wrongType = await api.post('P/content/a?create=true', content('a', { sort: 'first' }))
    expect(wrongType.status).toBe(400)
    expect(wrongType.text).toContain('"sort" must be a number')
    const wrongObject = await api.post('P/content/a?create=true', content('a', { properties: [] }))
    expect(wrongObject.text).toContain('"properties" must be an object')
    const scalar = await api.post('P/content/a?create=true', 5)
    expect(scalar.status).toBe(400)
    const array = await api.post('P/forms/f?create=true', [])
    expect(array.status).toBe(400)
    const missingLogin = await call(emu, 'POST', '/api/user/login', { body: { username: 'admin' } })
    expect(missingLogin.status).toBe(400)
    expect(missingLogin.text).toContain('password')
    const otherId = await api.post('P/content/a?create=true', content('b'))
    expect(otherId.status).toBe(400)
    expect(otherId.text).toContain('differs')
    const noSchemaType = await api.post('P/schemas/s?create=true', { id: 's' })
    expect(noSchemaType.status).toBe(400)
    expect((await api.get('P/content')).json()).toEqual([])
  })

  it('refuses an oversized body with 413 before reading it all', async () => {
    const emu = await start({ maxBodyMb: 1 })
    const api = client(emu, await login(emu))
    const big = { filename: 'big.bin', base64: Buffer.alloc(1024 * 1024).toString('base64') }
    const res = await api.post('P/media/abc', big)
    expect(res.status).toBe(413)
    expect(res.text).toContain('1 MB')
    expect((await api.get('P/media')).json()).toEqual([])
  })

  it('upstream: a body without the JSON type counts as {}, wrong-typed fields are dropped', async () => {
    const emu = await start({ dialect: 'upstream' })
    const api = client(emu, await login(emu))
    await api.post('P/forms/f?create=true', { id: 'f', title: 'Form' })
    const blanked = await api.post('P/forms/f', undefined, {
      raw: JSON.stringify({ id: 'f', title: 'Kept?' }),
    })
    expect(blanked.status).toBe(200)
    // The body became {}, so the form was rewritten under id "" with defaults (§7.2).
    expect((await api.get('P/forms')).json().map((f: { id: string }) => f.id)).toEqual([''])
    const typed = (
      await api.post('P/content/a?create=true', content('a', { sort: 'first', isPublished: 'yes' }))
    ).json()
    expect(typed.isPublished).toBe(false)
    expect(typed.sort).toBeGreaterThan(0)
  })
})

describe('dialect differences', () => {
  async function both() {
    const spec = await start()
    const upstream = await start({ dialect: 'upstream' })
    const apis = { spec: client(spec, await login(spec)), upstream: client(upstream, await login(upstream)) }
    for (const api of Object.values(apis)) {
      await api.post('P/schemas/sec?create=true', {
        id: 'sec',
        type: 'content',
        allowedChildSchemas: ['sec'],
      })
    }
    return apis
  }

  it('content: createDate, unknown id without ?create, body id, delete of unknown and orphans, list schedule', async () => {
    const { spec, upstream } = await both()
    const future = new Date(Date.now() + 86_400_000).toISOString()
    for (const api of [spec, upstream]) {
      await api.post('P/content/a?create=true', content('a', { publishOn: future }))
      await api.post('P/content/b?create=true', content('b', { parentId: 'a' }))
    }
    expect(
      (await spec.post('P/content/a', content('a', { createDate: undefined, publishOn: future }))).json()
        .createDate,
    ).toBe('2025-05-05T00:00:00.000Z')
    expect(
      (await upstream.post('P/content/a', content('a', { createDate: undefined, publishOn: future }))).json()
        .createDate,
    ).toBe('1970-01-01T00:00:00.000Z')
    expect((await spec.post('P/content/x', content('x'))).status).toBe(404)
    expect((await upstream.post('P/content/x', content('x'))).status).toBe(200)
    expect((await upstream.get('P/content/x')).status).toBe(404)
    expect((await upstream.post('P/content/b', content('renamed', { parentId: 'a' }))).json().id).toBe(
      'renamed',
    )
    expect((await upstream.get('P/content/renamed')).status).toBe(200)

    expect((await spec.get('P/content')).json()[0].publishOn).toBe(future)
    expect((await upstream.get('P/content')).json()[0].publishOn).toBe(null)
    expect((await upstream.get('P/content/a')).json().publishOn).toBe(future)
    expect((await spec.get('P/schedule/a')).json()).toEqual([{ type: 'publish', date: future, content: 'a' }])
    expect((await upstream.get('P/schedule/a')).json()).toEqual([])

    expect((await spec.del('P/content/nope')).status).toBe(404)
    expect((await upstream.del('P/content/nope')).text).toBe('Content with id "nope" deleted successfully')
    await spec.del('P/content/a')
    await upstream.del('P/content/a')
    expect((await spec.get('P/content/b')).json().parentId).toBe('')
    expect((await upstream.get('P/content/renamed')).json().parentId).toBe(null)
  })

  it('insert: spec renumbers the siblings; upstream every non-root node, dropping their schedules', async () => {
    const { spec, upstream } = await both()
    const future = new Date(Date.now() + 86_400_000).toISOString()
    for (const api of [spec, upstream]) {
      await api.post('P/content/p1?create=true', content('p1'))
      await api.post('P/content/p2?create=true', content('p2'))
      await api.post('P/content/a?create=true', content('a', { parentId: 'p1', sort: 1, publishOn: future }))
      await api.post('P/content/b?create=true', content('b', { parentId: 'p2', sort: 1 }))
      expect((await api.post('P/content/insert?contentId=b&parentId=p1&position=0')).text).toBe('OK')
    }
    expect((await spec.get('P/content/a')).json()).toMatchObject({
      parentId: 'p1',
      sort: 2,
      publishOn: future,
    })
    expect((await spec.get('P/content/b')).json()).toMatchObject({ parentId: 'p1', sort: 1 })
    expect((await upstream.get('P/content/a')).json()).toMatchObject({
      parentId: 'p1',
      sort: 2,
      publishOn: null,
    })
    expect((await upstream.get('P/content/b')).json()).toMatchObject({ parentId: 'p1', sort: 1 })
  })

  it('schemas: list routes, customOnly, native writes, import path', async () => {
    const { spec, upstream } = await both()
    expect((await spec.get('P/schema')).status).toBe(200)
    expect((await upstream.get('P/schema')).status).toBe(404)
    expect((await spec.get('P/schemas?customOnly=true')).json().map((s: { id: string }) => s.id)).toEqual([
      'sec',
    ])
    expect((await upstream.get('P/schemas?customOnly=true')).status).toBe(404)
    const native = { id: 'page', type: 'content', name: 'Mine' }
    expect((await spec.post('P/schemas/page?create=true', native)).status).toBe(400)
    expect((await upstream.post('P/schemas/page?create=true', native)).status).toBe(200)
    const pages = (await upstream.get('P/schemas')).json().filter((s: { id: string }) => s.id === 'page')
    expect(pages).toHaveLength(2)
    expect((await upstream.get('P/schemas/page')).json().name).toBe('Page')
    expect((await spec.post('P/import')).status).toBe(400)
    expect((await spec.post('P/import')).text).toBe('URL was not provided')
    expect((await upstream.post('P/schemas/import')).text).toBe('URL was not provided')
  })

  it('pull and push without a parent project', async () => {
    const { spec, upstream } = await both()
    for (const api of [spec, upstream]) {
      await api.post('P/content/a?create=true', content('a'))
      await api.post('P/connections/c?create=true', { id: 'c' })
      await api.post('P/forms/f?create=true', { id: 'f' })
      await api.post('P/schemas/s?create=true', { id: 's', type: 'field' })
    }
    for (const path of ['content', 'schemas', 'connections', 'forms']) {
      const id = { content: 'a', schemas: 's', connections: 'c', forms: 'f' }[path]
      const specPush = await spec.post(`P/${path}/push/${id}`)
      expect(specPush.status).toBe(404)
      expect(specPush.text).toContain('Sync is not enabled')
      expect((await spec.post(`P/${path}/pull/${id}`)).status).toBe(404)
      const push = await upstream.post(`P/${path}/push/${id}`)
      expect(push.text).toBe(path === 'content' || path === 'schemas' ? id : 'OK')
      const pull = await upstream.post(`P/${path}/pull/${id}`)
      expect(pull.status).toBe(404)
      expect(pull.text).toMatch(/^Couldn't find remote \w+ "/)
    }
  })

  it('connections and forms replies', async () => {
    const { spec, upstream } = await both()
    for (const api of [spec, upstream]) {
      await api.post('P/connections/c?create=true', { id: 'c', title: 'C' })
      await api.post('P/forms/f?create=true', { id: 'f', title: 'F', entries: [{ time: 'x' }] })
    }
    expect((await spec.del('P/connections/c')).json().title).toBe('C')
    expect((await upstream.del('P/connections/c')).text).toBe('Connection with id "c" deleted successfully')
    expect((await spec.get('P/forms/nope')).status).toBe(404)
    expect((await upstream.get('P/forms/nope')).json().id).toBe('')
    expect((await spec.post('P/forms/f', { id: 'f', title: 'F2' })).json().entries).toHaveLength(1)
    expect((await upstream.post('P/forms/f', { id: 'f', title: 'F2' })).text).toBe('OK')
    expect((await upstream.get('P/forms/f')).json().entries).toEqual([])
  })

  it('config sections: admin JSON in spec, unreachable upstream', async () => {
    const { spec, upstream } = await both()
    expect((await spec.get('/api/config/debug')).json()).toEqual({})
    expect((await spec.post('/api/config/debug', { verbosity: 3 })).status).toBe(200)
    expect((await spec.get('/api/config/debug')).json()).toEqual({ verbosity: 3 })
    const res = await upstream.get('/api/config/debug')
    expect([res.status, res.text]).toEqual([400, 'Project "config" could not be found'])
  })
})

describe('oversized streamed body', () => {
  it('answers 413 to a chunked upload past the limit without reading it all', async () => {
    const emu = await start({ maxBodyMb: 1 })
    const token = emu.token()
    const chunk = Buffer.alloc(256 * 1024, 'a')
    let sent = 0
    const body = new ReadableStream({
      pull(controller) {
        if (sent >= 64) return controller.close()
        sent++
        controller.enqueue(chunk)
      },
    })
    const res = await fetch(`${emu.url}/api/demo/live/forms/f?create=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: `token=${token}` },
      body,
      duplex: 'half',
    } as RequestInit)
    expect(res.status).toBe(413)
    expect(await res.text()).toContain('larger than the limit')
    expect(sent).toBeLessThan(64)
  })
})

describe('bad bodies on every writing endpoint (spec)', () => {
  const cases: Array<[string, string, unknown, RegExp]> = [
    ['POST', 'P/connections/c?create=true', { id: 'c', title: 5 }, /"title" must be a string/],
    ['POST', 'P/forms/f?create=true', { id: 'f', inputs: [] }, /"inputs" must be an object/],
    [
      'POST',
      'P/forms/f?create=true',
      { id: 'f', appendRedirect: 'sometimes' },
      /"appendRedirect" must be a boolean/,
    ],
    [
      'POST',
      'P/schemas/s?create=true',
      { id: 's', type: 'content', allowedChildSchemas: 'x' },
      /"allowedChildSchemas" must be an array/,
    ],
    ['POST', 'P/content/c?create=true', { id: 'c', publishOn: 'not a date' }, /"publishOn" must be a date/],
    ['POST', 'P/media/tree/m', { id: 'm', folder: 3 }, /"folder" must be a string/],
    ['POST', 'P/media/m', { filename: 'a.png' }, /"base64"/],
    ['POST', 'P/media/m', { base64: '' }, /"filename"/],
    ['POST', 'P/media/rename/m', { name: 7 }, /"name"/],
    ['POST', '/api/demo/settings/info', 'text', /JSON/],
    ['POST', '/api/users/new', { username: 'x' }, /password/],
    ['POST', '/api/server/projects/new', { name: 4 }, /name/],
    ['POST', '/api/server/migrate/demo', { from: 'live' }, /Environment/],
    ['POST', '/api/config/debug', [1], /object/],
    ['POST', '/api/demo/sync/login', 'nope', /JSON/],
  ]
  it.each(cases)('%s %s refuses %j with 400', async (method, path, body, message) => {
    const emu = await start()
    const token = emu.token()
    const raw = typeof body === 'string' ? body : undefined
    const res = await call(emu, method, path.replace('P/', '/api/demo/live/'), {
      token,
      body: raw === undefined ? body : undefined,
      raw,
      headers: raw === undefined ? {} : { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(400)
    expect(res.text).toMatch(message)
  })
})
