// --seed: a workspace folder in the layout of design.md becomes the project's content.

import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { startEmulator } from '../../src/emulator/index.js'
import { client, start, tempDir } from './helpers.js'

function write(root: string, rel: string, data: string | Buffer | object): void {
  const file = path.join(root, rel)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(
    file,
    typeof data === 'string' || Buffer.isBuffer(data) ? data : `${JSON.stringify(data, null, 2)}\n`,
  )
}

// A workspace secret reference, spelled out so it is not mistaken for a template placeholder.
const ref = (name: string) => `$${'{'}${name}}`

function workspace(): string {
  const ws = tempDir()
  write(ws, 'cms-sync.yaml', 'server: http://127.0.0.1:8080\nproject: demo\nenvironment: live\n')
  write(ws, 'schemas/section.json', {
    id: 'section',
    type: 'content',
    name: 'Section',
    parentSchemaId: 'page',
    allowedChildSchemas: ['section'],
  })
  // Children sort before parents by name; the seed must still write the parent first.
  write(ws, 'content/a-child.json', {
    parentId: 'z-parent',
    schemaId: 'section',
    sort: 1,
    properties: { t: 1 },
  })
  write(ws, 'content/z-parent.json', {
    id: 'z-parent',
    parentId: '',
    schemaId: 'section',
    sort: 1,
    properties: {},
  })
  write(ws, 'content/a%2Fb.json', { parentId: '', schemaId: 'section', sort: 2, properties: {} })
  write(ws, 'forms/contact.json', { id: 'contact', title: 'Contact', inputs: { email: { type: 'text' } } })
  write(ws, 'connections/site.json', {
    id: 'site',
    title: 'Site',
    deployer: { alias: 'git', password: ref('SEED_TEST_SECRET'), token: ref('SEED_TEST_UNSET') },
    processor: { alias: 'json' },
  })
  write(ws, 'media/images/logo.png', Buffer.from([1, 2, 3]))
  write(ws, 'media/readme.txt', 'hello')
  write(ws, 'media.yaml', '"images/logo.png": 00112233aabbccdd\n')
  return ws
}

describe('--seed', () => {
  it('loads schemas, content (parents first, encoded ids), forms, connections with secrets, media and folders', async () => {
    process.env.SEED_TEST_SECRET = 's3cret'
    const emu = await start({ seedDir: workspace() })
    delete process.env.SEED_TEST_SECRET
    expect(emu.seedReport).toContain('3 content')
    const api = client(emu, emu.token())
    expect((await api.get('P/schemas/section')).json().name).toBe('Section')
    const child = (await api.get('P/content/a-child')).json()
    expect(child).toMatchObject({
      id: 'a-child',
      parentId: 'z-parent',
      properties: { t: 1 },
      isLocked: false,
    })
    expect(child.updatedBy).toBe(emu.users.byName('admin')!.id)
    expect(Date.parse(child.updateDate)).toBeGreaterThan(0)
    expect((await api.get(`P/content/${encodeURIComponent('a/b')}`)).status).toBe(200)
    expect((await api.get('P/forms/contact')).json().title).toBe('Contact')
    const site = (await api.get('P/connections/site')).json()
    expect(site.deployer).toMatchObject({ title: 'Git', password: 's3cret', token: ref('SEED_TEST_UNSET') })
    const media = (await api.get('P/media')).json()
    expect(media.find((m: { name: string }) => m.name === 'logo.png')).toMatchObject({
      id: '00112233aabbccdd',
      folder: '/images/',
    })
    const readme = media.find((m: { name: string }) => m.name === 'readme.txt')
    expect(readme.id).toMatch(/^[0-9a-f]{16}$/)
    expect(readme.folder).toBe('/')
    expect(await (await fetch(`${emu.url}/media/demo/live/${readme.id}`)).text()).toBe('hello')
  })

  it('refuses a file whose id does not match its name, naming the file', async () => {
    const ws = workspace()
    write(ws, 'forms/other.json', { id: 'different' })
    await expect(startEmulator({ seedDir: ws })).rejects.toThrow(/other\.json.*does not match/)
  })

  it('seeds a data folder only while it is empty', async () => {
    const dataDir = tempDir()
    const ws = workspace()
    const first = await startEmulator({ dataDir, seedDir: ws })
    await client(first, first.token()).del('P/forms/contact')
    await first.close()
    const second = await startEmulator({ dataDir, seedDir: ws })
    try {
      expect(second.seedReport).toMatch(/not seeding/)
      expect((await client(second, second.token()).get('P/forms/contact')).status).toBe(404)
    } finally {
      await second.close()
    }
  })

  it('loads the example workspace', async () => {
    const example = path.resolve(import.meta.dirname, '../../example-workspace')
    if (!fs.existsSync(example)) return
    const emu = await start({ seedDir: example })
    const api = client(emu, emu.token())
    const content = (await api.get('P/content')).json()
    expect(content.length).toBe(fs.readdirSync(path.join(example, 'content')).length)
    expect((await api.get('P/media')).json().length).toBeGreaterThan(0)
    expect((await api.get('/api/demo/settings/languages')).json()).toEqual(['de', 'en'])
  })
})
