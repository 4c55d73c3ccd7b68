// The server's own Sync feature between two emulators (upstream §9): a child project whose
// settings point at a parent lists the parent's items first, locked and flagged, reads them by
// id, pulls local copies and pushes local items up, in each dialect's way.

import { describe, expect, it } from 'vitest'
import { client, DIALECTS, login, start } from './helpers.js'

const page = (id: string, title: string) => ({
  id,
  parentId: '',
  schemaId: 'page',
  sort: 1,
  createDate: '2025-05-05T00:00:00.000Z',
  properties: { title },
})

async function family(dialect: (typeof DIALECTS)[number]) {
  const parentEmu = await start({ dialect })
  const childEmu = await start({ dialect })
  const parent = client(parentEmu, await login(parentEmu))
  const child = client(childEmu, await login(childEmu))
  const link = await child.post('/api/demo/settings/sync', {
    enabled: true,
    url: `${parentEmu.url}/ignored/path`,
    token: await login(parentEmu),
    project: 'demo',
  })
  expect(link.status).toBe(200)
  return { parent, child, parentEmu, childEmu }
}

describe.each(DIALECTS)('%s: a child project inheriting from a parent', (dialect) => {
  it('lists inherited items first, locked and flagged; local copies of a parent id say hasRemote', async () => {
    const { parent, child } = await family(dialect)
    await parent.post('P/content/inherited?create=true', page('inherited', 'From the parent'))
    await parent.post('P/content/both?create=true', page('both', 'Parent copy'))
    await parent.post('P/forms/f1?create=true', { id: 'f1', title: 'Parent form' })
    await child.post('P/content/pull/both')
    await child.post('P/content/both?create=true', page('both', 'Child copy'))
    await child.post('P/content/own?create=true', page('own', 'Only here'))

    const listed = (await child.get('P/content')).json()
    expect(listed.map((c: { id: string }) => c.id)).toEqual(['inherited', 'both', 'own'])
    expect(listed[0]).toMatchObject({ isLocked: true, sync: { isRemote: true, hasRemote: false } })
    expect(listed[1]).toMatchObject({ isLocked: false, sync: { isRemote: false, hasRemote: true } })
    expect(listed[1].properties.title).toBe('Child copy')
    expect((await child.get('P/forms')).json()[0]).toMatchObject({ id: 'f1', sync: { isRemote: true } })
    const byId = await child.get('P/content/inherited')
    expect(byId.status).toBe(200)
    expect(byId.json().properties.title).toBe('From the parent')
  })

  it('pull makes a local copy; push sends a local item up to the parent', async () => {
    const { parent, child } = await family(dialect)
    await parent.post('P/content/inherited?create=true', page('inherited', 'From the parent'))
    const pulled = await child.post('P/content/pull/inherited')
    expect(pulled.status).toBe(200)
    const after = (await child.get('P/content')).json()
    expect(after).toHaveLength(1)
    expect(after[0]).toMatchObject({ id: 'inherited', isLocked: false, sync: { hasRemote: true } })

    await child.post('P/content/mine?create=true', page('mine', 'Promoted'))
    const pushed = await child.post('P/content/push/mine')
    expect(pushed.status).toBe(200)
    expect(pushed.text).toBe('mine')
    const onParent = await parent.get('P/content/mine')
    expect(onParent.status).toBe(200)
    expect(onParent.json()).toMatchObject({ properties: { title: 'Promoted' }, isLocked: false })
  })

  it('writing an inherited id without pull: spec refuses, upstream makes it a local item', async () => {
    const { parent, child } = await family(dialect)
    await parent.post('P/connections/c1?create=true', { id: 'c1', title: 'Parent connection' })
    const write = await child.post('P/connections/c1?create=true', { id: 'c1', title: 'Edited' })
    if (dialect === 'spec') {
      expect(write.status).toBe(409)
      expect(write.text).toContain('connections/pull/c1')
    } else {
      expect(write.status).toBe(200)
      expect((await child.get('P/connections')).json()[0]).toMatchObject({ title: 'Edited', isLocked: false })
    }
    expect((await parent.get('P/connections/c1')).json().title).toBe('Parent connection')
  })

  it('a failed read of the parent: upstream disables sync on the child, spec answers 404 and keeps it', async () => {
    const { child } = await family(dialect)
    const miss = await child.get('P/content/nowhere')
    expect(miss.status).toBe(404)
    const settings = (await child.get('/api/demo/settings/sync')).json()
    expect(settings.enabled).toBe(dialect === 'spec')
    if (dialect === 'upstream') expect(miss.text).toContain('Disabling sync')
  })

  it('the schema list: spec merges the parent custom schemas, upstream trips on customOnly', async () => {
    const { parent, child } = await family(dialect)
    await parent.post('P/schemas/shared?create=true', {
      id: 'shared',
      type: 'field',
      parentSchemaId: 'string',
    })
    const listed = await child.get(dialect === 'spec' ? 'P/schema' : 'P/schemas')
    if (dialect === 'spec') {
      const shared = listed.json().find((s: { id: string }) => s.id === 'shared')
      expect(shared).toMatchObject({ isLocked: true, sync: { isRemote: true } })
    } else {
      expect(listed.status).toBe(404)
      expect((await child.get('/api/demo/settings/sync')).json().enabled).toBe(false)
    }
  })

  it('media tree: the parent tree replaces the child one; tree writes go to both', async () => {
    const { parent, child } = await family(dialect)
    await child.post('P/media/tree/m1', { id: 'm1', folder: '/from-child/' })
    const onParent = (await parent.get('P/media/tree')).json()
    expect(JSON.stringify(onParent)).toContain('/from-child/')
    const onChild = (await child.get('P/media/tree')).json()
    expect(JSON.stringify(onChild)).toContain('m1')
  })
})

describe('a project that inherits from itself', () => {
  it('answers with a cyclic-sync error instead of looping', async () => {
    const emu = await start({ dialect: 'spec' })
    const api = client(emu, await login(emu))
    await api.post('/api/demo/settings/sync', {
      enabled: true,
      url: emu.url,
      token: await login(emu),
      project: 'demo',
    })
    const listed = await api.get('P/content')
    expect(listed.status).toBe(508)
    expect(listed.text).toContain('Cyclic sync')
  })
})
