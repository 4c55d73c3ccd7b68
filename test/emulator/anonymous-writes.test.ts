// Seen on the real server (test/upstream, shared/upstream/README.md): schema, form, connection
// and media writes and deletes go through without any token; only content writes need a user
// (they fail with the null-user 404). That is why cms-sync checks the token before a run
// writes (engine/plan-and-apply.ts): without it an expired token wrote the schemas of a plan and stopped
// at its content. Spec refuses every anonymous write with 401.

import { afterEach, describe, expect, it } from 'vitest'
import type { Emulator } from '../../src/emulator/index.js'
import { call, client, login, start } from './helpers.js'

const P = '/api/demo/live'

describe('writes without a token', () => {
  let emu: Emulator | undefined
  afterEach(async () => {
    await emu?.close()
    emu = undefined
  })

  it('upstream: schema, form, connection and media writes and deletes are taken; content writes are not', async () => {
    emu = await start({ dialect: 'upstream' })
    const json = (body: unknown) => ({ body })
    const schema = await call(
      emu,
      'POST',
      `${P}/schemas/anon?create=true`,
      json({ id: 'anon', name: 'Anon', type: 'content', parentSchemaId: 'page' }),
    )
    expect(schema.status).toBe(200)
    const form = await call(emu, 'POST', `${P}/forms/anonf?create=true`, json({ id: 'anonf', title: 'Anon' }))
    expect([form.status, form.text]).toEqual([200, 'OK'])
    const connection = await call(
      emu,
      'POST',
      `${P}/connections/anonc?create=true`,
      json({ id: 'anonc', title: 'Anon' }),
    )
    expect(connection.status).toBe(200)
    const multipart = new FormData()
    multipart.append('media', new Blob(['hi']), 'anon.txt')
    // The project's first upload: stored, then the cache-folder 500 (as on the real server).
    const media = await call(emu, 'POST', `${P}/media/abcdef0123456789`, { raw: multipart })
    expect(media.status).toBe(500)
    const content = await call(
      emu,
      'POST',
      `${P}/content/anonx?create=true`,
      json({ id: 'anonx', schemaId: 'page', parentId: '' }),
    )
    expect([content.status, content.text]).toEqual([404, "Cannot read properties of null (reading 'id')"])

    const api = client(emu, await login(emu))
    const ids = async (segment: string) =>
      ((await api.get(`P/${segment}`)).json() as Array<{ id: string }>).map((item) => item.id)
    expect(await ids('schemas')).toContain('anon')
    expect(await ids('forms')).toEqual(['anonf'])
    expect(await ids('connections')).toContain('anonc')
    expect(await ids('media')).toEqual(['abcdef0123456789'])
    expect(await ids('content')).not.toContain('anonx')

    for (const [segment, id] of [
      ['schemas', 'anon'],
      ['forms', 'anonf'],
      ['connections', 'anonc'],
    ] as const) {
      expect((await call(emu, 'DELETE', `${P}/${segment}/${id}`)).status, segment).toBe(200)
      expect(await ids(segment)).not.toContain(id)
    }
  })

  it('spec: every anonymous write is refused with 401 and stores nothing', async () => {
    emu = await start({ dialect: 'spec' })
    for (const [segment, body] of [
      ['schemas', { id: 'anon', name: 'Anon', type: 'content', parentSchemaId: 'page' }],
      ['forms', { id: 'anonf', title: 'Anon' }],
      ['connections', { id: 'anonc', title: 'Anon' }],
      ['content', { id: 'anonx', schemaId: 'page', parentId: '' }],
    ] as const) {
      const res = await call(emu, 'POST', `${P}/${segment}/${body.id}?create=true`, { body })
      expect(res.status, segment).toBe(401)
    }
  })
})
