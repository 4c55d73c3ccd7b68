// Media in both dialects: upload (JSON base64 in spec, multipart in upstream), list, get,
// tree, rename, bytes with Content-Type and Content-Length, delete.

import { describe, expect, it } from 'vitest'
import { call, client, login, start } from './helpers.js'

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')

describe('spec dialect media', () => {
  it('takes a new id, uploads JSON base64, lists, renames, serves the bytes and deletes with the tree item', async () => {
    const emu = await start()
    const api = client(emu, await login(emu))
    const id = (await api.get('P/media/new')).text
    expect(id).toMatch(/^[0-9a-f]{16}$/)
    expect((await api.get(`P/media/${id}`)).status).toBe(404)
    const up = await api.post(`P/media/${id}`, { filename: 'My Photo.png', base64: PNG.toString('base64') })
    expect(up.status).toBe(200)
    expect(up.json()).toMatchObject({
      id,
      name: 'My Photo.png',
      folder: '/',
      url: `/media/demo/live/${id}`,
      path: '',
    })
    const firstDate = up.json().updateDate
    expect(Date.parse(firstDate)).toBeGreaterThan(0)

    expect((await api.post(`P/media/tree/${id}`, { id, folder: '/images/' })).json()).toEqual({
      id,
      folder: '/images/',
    })
    expect((await api.get('P/media/tree')).json()).toEqual({ [id]: { id, folder: '/images/' } })
    expect((await api.get('P/media')).json()).toEqual([{ ...up.json(), folder: '/images/' }])

    const bytes = await fetch(`${emu.url}/media/demo/live/${id}`)
    expect(bytes.headers.get('content-type')).toBe('image/png')
    expect(bytes.headers.get('content-length')).toBe(String(PNG.length))
    expect(Buffer.from(await bytes.arrayBuffer())).toEqual(PNG)
    const head = await fetch(`${emu.url}/media/demo/live/${id}`, { method: 'HEAD' })
    expect([head.status, head.headers.get('content-length')]).toEqual([200, String(PNG.length)])

    const renamed = await api.post(`P/media/rename/${id}`, { name: 'photo.txt' })
    expect(renamed.json()).toMatchObject({ id, name: 'photo.txt' })
    const renamedByQuery = await api.post(`P/media/rename/${id}?name=photo.svg`)
    expect(renamedByQuery.json().name).toBe('photo.svg')
    expect((await fetch(`${emu.url}/media/demo/live/${id}`)).headers.get('content-type')).toBe(
      'image/svg+xml',
    )
    expect((await api.post(`P/media/rename/${id}`, { name: '../escape' })).status).toBe(400)

    expect((await api.post(`P/media/${id}`, { filename: 'a/b.png', base64: '' })).status).toBe(400)
    expect((await api.post(`P/media/${id}`, { filename: 'b.png', base64: '***' })).status).toBe(400)
    const multipart = new FormData()
    multipart.append('media', new Blob([PNG]), 'x.png')
    expect((await api.post(`P/media/${id}`, undefined, { raw: multipart })).status).toBe(400)

    expect((await api.del(`P/media/${id}`)).status).toBe(200)
    expect((await api.get('P/media')).json()).toEqual([])
    expect((await api.get('P/media/tree')).json()).toEqual({})
    expect((await fetch(`${emu.url}/media/demo/live/${id}`)).status).toBe(404)
    expect((await api.del(`P/media/${id}`)).status).toBe(404)
  })
})

describe('upstream dialect media', () => {
  it('uploads multipart field "media" with rewritten names, lists with relative urls, keeps the tree item on delete', async () => {
    const emu = await start({ dialect: 'upstream' })
    const api = client(emu, await login(emu))
    expect((await api.get('P/media/new')).status).toBe(404)
    const form = new FormData()
    form.append('media', new Blob([PNG]), 'My Photo.PNG')
    form.append('media', new Blob(['hello']), 'a.b.txt')
    const made = await api.post('P/media/new', undefined, { raw: form })
    expect(made.status).toBe(200)
    const [id, second] = made.json() as string[]
    expect(id).toMatch(/^[0-9a-f]{16}$/)
    const got = (await api.get(`P/media/${id}`)).json()
    expect(got).toMatchObject({ id, name: 'my-photo.PNG', url: '', folder: '/', updateDate: null })
    expect(got.path).toMatch(new RegExp(`/${id}/my-photo\\.PNG$`))
    expect((await api.get(`P/media/${second}`)).json().name).toBe('a.b')

    const json = await api.post(`P/media/${id}`, { filename: 'x.png', base64: PNG.toString('base64') })
    expect(json.status).toBe(500)
    expect(json.text).toBe('No files provided')

    // A download makes the project's cache folder, after which replacing and deleting work.
    expect((await fetch(`${emu.url}/media/demo/live/${id}`)).status).toBe(200)
    const replace = new FormData()
    replace.append('media', new Blob(['<svg/>']), 'Logo File.svg')
    const replaced = await api.post(`P/media/${id}`, undefined, { raw: replace })
    expect(replaced.text).toBe(id)
    expect((await fetch(`${emu.url}/media/demo/live/${id}`)).headers.get('content-type')).toBe(
      'image/svg+xml',
    )

    await api.post(`P/media/tree/${id}`, { id, folder: 'a//b' })
    expect((await api.get('P/media/tree')).json()).toEqual([
      { folder: '/', id: '*' },
      { id, folder: '/a/b/' },
    ])
    const list = (await api.get('P/media')).json()
    expect(list[0]).toMatchObject({
      id,
      name: 'logo-file.svg',
      url: `media/${id}/logo-file.svg`,
      path: '',
      folder: '/a/b/',
    })

    expect((await api.post(`P/media/rename/${id}`, { name: 'x' })).status).toBe(400)
    expect((await api.post(`P/media/rename/${id}?name=Raw Name.svg`)).text).toBe(id)
    expect((await api.get(`P/media/${id}`)).json().name).toBe('Raw Name.svg')

    expect((await api.del(`P/media/${id}`)).text).toBe('OK')
    expect((await api.get('P/media/tree')).json()).toHaveLength(2)
  })

  it("models the cache-folder bug of a new project: 500 after storing, a delete that deletes nothing, the first downloads' race", async () => {
    const emu = await start({ dialect: 'upstream' })
    const api = client(emu, await login(emu))
    const upload = (id: string, text: string) => {
      const form = new FormData()
      form.append('media', new Blob([text]), 'My Photo.png')
      return api.post(`P/media/${id}`, undefined, { raw: form })
    }
    const first = await upload('aaaa000000000001', 'one')
    expect(first.status).toBe(500)
    expect(first.text).toMatch(/^ENOENT: no such file or directory, lstat '.*\/storage\/demo\/cache'$/)
    // ... but the file was stored
    expect((await api.get('P/media')).json()).toMatchObject([
      { id: 'aaaa000000000001', name: 'my-photo.png' },
    ])
    expect((await upload('aaaa000000000002', 'two')).status).toBe(500)
    const removed = await api.del('P/media/aaaa000000000001')
    expect([removed.status, removed.text]).toEqual([404, first.text])
    expect((await api.get('P/media')).json()).toHaveLength(2)
    // Downloads sent side by side race on making the cache folder: one gets 404 EEXIST
    const answers = await Promise.all(
      ['aaaa000000000001', 'aaaa000000000002'].map((id) => fetch(`${emu.url}/media/demo/live/${id}`)),
    )
    const texts = await Promise.all(answers.map((a) => a.text()))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404])
    expect(texts.find((t) => t.startsWith('EEXIST'))).toMatch(
      /^EEXIST: file already exists, mkdir '.*\/cache'$/,
    )
    // After one download the folder exists: uploads and deletes answer as they should
    expect((await upload('aaaa000000000001', 'one again')).text).toBe('aaaa000000000001')
    expect((await api.del('P/media/aaaa000000000002')).text).toBe('OK')
    expect((await api.get('P/media')).json()).toHaveLength(1)
    // Another project has its own cache folder; spec and mediaCacheReady have no such bug
    const ready = await start({ dialect: 'upstream', mediaCacheReady: true })
    const readyApi = client(ready, await login(ready))
    const form = new FormData()
    form.append('media', new Blob(['x']), 'x.png')
    expect((await readyApi.post('P/media/aaaa000000000003', undefined, { raw: form })).status).toBe(200)
  })

  it('serves media bytes without a token but only for a known project', async () => {
    const emu = await start({ dialect: 'upstream' })
    expect((await call(emu, 'GET', '/media/nope/live/abc')).status).toBe(400)
    expect((await call(emu, 'GET', '/media/demo/live/abc')).status).toBe(404)
  })
})
