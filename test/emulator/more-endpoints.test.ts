// The rarer endpoints: sync login, schema import, heartbeat, schedule validation, P/users,
// update check.

import { describe, expect, it } from 'vitest'
import { call, client, DIALECTS, login, start } from './helpers.js'

describe.each(DIALECTS)('%s dialect', (dialect) => {
  const bad = dialect === 'spec' ? 400 : 404

  it('logs in to another emulator for sync, refusing a cyclic or invalid target', async () => {
    const local = await start({ dialect })
    const remote = await start({ users: [{ username: 'sync', password: 'pw', isAdmin: true }] })
    const api = client(local, await login(local))
    const ok = await api.post('/api/demo/sync/login', {
      username: 'sync',
      password: 'pw',
      url: `${remote.url}/ignored/path`,
    })
    expect(ok.status).toBe(200)
    expect(ok.text).toMatch(/^[0-9a-f]{40}$/)
    expect((await call(remote, 'GET', '/api/user', { token: ok.text })).json().username).toBe('sync')
    const wrong = await api.post('/api/demo/sync/login', {
      username: 'sync',
      password: 'nope',
      url: remote.url,
    })
    expect(wrong.status).toBe(401)
    expect(
      (await api.post('/api/demo/sync/login', { username: 'a', password: 'b', url: 'ftp://x' })).text,
    ).toBe('Sync url not valid')
    await api.post('/api/demo/settings/sync', { enabled: false, project: 'demo', url: remote.url })
    expect((await api.post('/api/demo/sync/login', { username: 'sync', password: 'pw' })).text).toBe(
      'Cyclic sync',
    )
  })

  it('imports schemas from a URL the server fetches', async () => {
    const emu = await start({ dialect })
    const api = client(emu, await login(emu))
    // The emulator's own media route serves the JSON to import.
    const source = await start()
    const sourceApi = client(source, source.token())
    const schemas = [
      { id: 'teaser', type: 'field', name: 'Teaser', parentSchemaId: 'struct', editorId: 'StructEditor' },
      { '@type': 'PostalAddress', streetAddress: 'Text' },
    ]
    await sourceApi.post('P/media/schemas', {
      filename: 'schemas.json',
      base64: Buffer.from(JSON.stringify(schemas)).toString('base64'),
    })
    const path = dialect === 'spec' ? 'P/import' : 'P/schemas/import'
    const res = await api.post(`${path}?url=${encodeURIComponent(`${source.url}/media/demo/live/schemas`)}`)
    expect(res.status).toBe(200)
    expect(res.json()).toEqual(schemas)
    expect((await api.get('P/schemas/teaser')).json()).toMatchObject({ name: 'Teaser', type: 'field' })
    expect((await api.get('P/schemas/postalAddress')).json()).toMatchObject({
      name: 'PostalAddress',
      parentSchemaId: 'struct',
    })
    const unreachable = await api.post(`${path}?url=${encodeURIComponent('http://127.0.0.1:9/nothing')}`)
    expect(unreachable.status).toBe(bad)
  })

  it('records heartbeats in viewedBy/viewedOn without touching updateDate', async () => {
    const emu = await start({ dialect })
    const token = await login(emu)
    const api = client(emu, token)
    const made = (await api.post('P/content/new?schemaId=page', {})).json()
    expect((await api.post(`P/content/heartbeat/${made.id}`)).text).toBe('OK')
    const seen = (await api.get(`P/content/${made.id}`)).json()
    expect(seen.viewedBy).toBe(emu.users.byName('admin')!.id)
    expect(Date.parse(seen.viewedOn)).toBeGreaterThan(0)
    expect(seen.updateDate).toBe(made.updateDate)
    await api.post('P/forms/f?create=true', { id: 'f' })
    expect((await api.post('P/forms/heartbeat/f')).text).toBe('OK')
    expect((await api.get('P/forms/f')).json().viewedBy).toBe(seen.viewedBy)
  })

  it('refuses a 1970 or unparsable schedule date and keeps the stored node', async () => {
    const emu = await start({ dialect })
    const api = client(emu, await login(emu))
    const body = { id: 'a', schemaId: 'page', createDate: '2025-01-01T00:00:00.000Z', properties: {} }
    await api.post('P/content/a?create=true', body)
    const epoch = await api.post('P/content/a', { ...body, publishOn: '1970-01-02T00:00:00.000Z' })
    expect(epoch.status).toBe(bad)
    expect(epoch.text).toBe('Date "1970-01-02T00:00:00.000Z" is invalid')
    expect((await api.get('P/content/a')).json().publishOn).toBe(null)
  })

  it('lists the users of a project and reads one', async () => {
    const emu = await start({ dialect })
    const api = client(emu, await login(emu))
    const made = (
      await api.post('/api/users/new', { username: 'ed', password: 'pw', scopes: { demo: ['content'] } })
    ).json()
    await api.post('/api/users/new', { username: 'other', password: 'pw', scopes: { elsewhere: [] } })
    const names = (await api.get('P/users')).json().map((u: { username: string }) => u.username)
    expect(names.sort()).toEqual(['admin', 'ed'])
    expect((await api.get(`P/users/${made.id}`)).json().username).toBe('ed')
    expect((await api.get('/api/server/update/check')).json()).toMatchObject({ isBehind: false })
  })

  it('makes the first user an admin on a server without users, once', async () => {
    const emu = await start({ dialect, users: [] })
    const first = await call(emu, 'POST', '/api/users/first', { body: { username: 'boss', password: 'pw' } })
    expect(first.status).toBe(200)
    expect((await call(emu, 'GET', '/api/user', { token: first.text })).json()).toMatchObject({
      username: 'boss',
      isAdmin: true,
    })
    expect(
      (await call(emu, 'POST', '/api/users/first', { body: { username: 'b', password: 'pw' } })).status,
    ).toBe(403)
  })

  it('sets a project settings section through the Server group', async () => {
    const emu = await start({ dialect })
    const api = client(emu, await login(emu))
    expect((await api.post('/api/server/settings/demo/info', { name: 'Renamed' })).status).toBe(200)
    expect((await api.get('/api/server/projects/demo')).json().settings.info).toEqual({ name: 'Renamed' })
  })
})
