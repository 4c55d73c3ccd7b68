// Every JSON kind both ways on the real server, starting from the example workspace (4 schemas,
// 13 content nodes in a tree with multilingual fields, a form, a connection with a secret):
// push it into a fresh project, edit on either side, delete on either side, and after every
// step check that the server holds exactly what the step meant and nothing else changed.

import { cp, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  cleanupTemps,
  expectOnly,
  freshProject,
  initWorkspace,
  REPO_EXAMPLE,
  SETUP,
  type ServerState,
  serverState,
  type Upstream,
  type Workspace,
} from './harness.js'

const SECRET = { CMS_SYNC_SECRET_DEMO_GIT_PASSWORD: 'up-suite-secret-pw' }
/** How a file names the secret (`${NAME}`). */
const SECRET_REF = `$\{CMS_SYNC_SECRET_DEMO_GIT_PASSWORD}`

describe.skipIf(!SETUP)('every kind both ways (real upstream server)', () => {
  let up: Upstream
  let ws: Workspace
  let state: ServerState
  const ids = { schemas: [] as string[], content: [] as string[] }

  beforeAll(async () => {
    up = await freshProject('kinds')
    ws = await initWorkspace(up, 'kinds', SECRET)
    // The example's pages publish through a git repository that does not exist (and three name
    // no connection): this file is about the kinds, so cms-sync deploys nothing here.
    // Publishing on this server is test/upstream/publishing.test.ts.
    const config = path.join(ws.root, 'cms-sync.yaml')
    await writeFile(
      config,
      (await readFile(config, 'utf8')).replace(/^publishing: .*$/m, 'publishing: manual'),
    )
  })
  afterAll(cleanupTemps)

  it('a first pull mirrors the new project and changes nothing on the server', async () => {
    state = await serverState(up.api)
    await ws.ok('pull')
    // setup.sh's media connection is the project's only item.
    const [connection] = [...state.connections.values()]
    expect(await ws.readJson(`connections/${connection!.id}.json`)).toMatchObject({ title: 'Local media' })
    state = await expectOnly(up.api, state)
    await ws.expectClean()
  })

  it('push creates every schema, content node, form and connection, exactly as the files say', async () => {
    for (const folder of ['schemas', 'content', 'forms', 'connections'])
      await cp(path.join(REPO_EXAMPLE, folder), path.join(ws.root, folder), { recursive: true })
    const files = await ws.files()
    ids.schemas = files.filter((f) => f.startsWith('schemas/')).map(idOf)
    ids.content = files.filter((f) => f.startsWith('content/')).map(idOf)
    const push = await ws.ok('--json', 'push')
    expect((push.json as { failed: unknown[] }).failed).toEqual([])
    state = await expectOnly(up.api, state, {
      added: [
        ...ids.schemas.map((id) => `schemas/${id}`),
        ...ids.content.map((id) => `content/${id}`),
        'forms/contact',
        'connections/website',
      ],
    })
    for (const id of ids.content) {
      const file = await ws.readJson(`content/${id}.json`)
      const server = await up.api.get('content', id)
      // Every field of the file, as written (multilingual values keep their flag and languages).
      expect(server, `content/${id}`).toMatchObject(file)
      expect(server, `content/${id} authorship`).toMatchObject({ createdBy: up.userId, updatedBy: up.userId })
    }
    for (const id of ids.schemas)
      expect(state.schemas.get(id), `schemas/${id}`).toMatchObject(await ws.readJson(`schemas/${id}.json`))
    expect(state.forms.get('contact')).toMatchObject(await ws.readJson('forms/contact.json'))
    // The secret went to the server from the environment; the file keeps the reference.
    expect(state.connections.get('website')).toMatchObject({
      deployer: { alias: 'git', password: SECRET.CMS_SYNC_SECRET_DEMO_GIT_PASSWORD, username: 'deploy' },
    })
    expect((await ws.readJson('connections/website.json')).deployer).toMatchObject({
      password: SECRET_REF,
    })
    await ws.expectClean()
    state = await expectOnly(up.api, state)
  })

  it('edits made on the server come down to the files; the pull writes nothing back', async () => {
    const about = await up.api.get('content', 'about')
    const props = about.properties as Record<string, Record<string, unknown>>
    await up.api.put('content', {
      ...about,
      properties: { ...props, title: { ...props.title, de: 'Über die Rösterei' } },
    })
    const schema = state.schemas.get('articlePage')!
    await up.api.put('schemas', { ...schema, name: 'Article (edited on the server)' })
    const form = state.forms.get('contact')!
    await up.api.put('forms', { ...form, title: 'Write to us' })
    const site = state.connections.get('website')!
    await up.api.put('connections', { ...site, url: 'https://www.northwind.example/v2' })
    state = await serverState(up.api)

    const status = await ws.cli('--json', 'status')
    expect(changesOf(status.json)).toEqual([
      ['connections/website.json', 'pull'],
      ['content/about.json', 'pull'],
      ['forms/contact.json', 'pull'],
      ['schemas/articlePage.json', 'pull'],
    ])
    await ws.ok('pull')
    expect(((await ws.readJson('content/about.json')).properties as Record<string, unknown>).title).toEqual({
      _multilingual: true,
      de: 'Über die Rösterei',
      en: 'About us',
    })
    expect(await ws.readJson('schemas/articlePage.json')).toMatchObject({
      name: 'Article (edited on the server)',
    })
    expect(await ws.readJson('forms/contact.json')).toMatchObject({ title: 'Write to us' })
    expect(await ws.readJson('connections/website.json')).toMatchObject({
      url: 'https://www.northwind.example/v2',
      deployer: { password: SECRET_REF },
    })
    state = await expectOnly(up.api, state)
    await ws.expectClean()
  })

  it('local edits of each kind reach the server and change nothing else', async () => {
    const home = await ws.readJson('content/home.json')
    const homeBefore = await up.api.get('content', 'home')
    const title = home.properties as Record<string, Record<string, string>>
    await ws.writeJson('content/home.json', {
      ...home,
      properties: { ...title, heading: { ...title.heading, en: 'Fresh coffee, every morning' } },
    })
    const contactPage = await ws.readJson('schemas/contactPage.json')
    await ws.writeJson('schemas/contactPage.json', { ...contactPage, icon: 'phone' })
    const form = await ws.readJson('forms/contact.json')
    await ws.writeJson('forms/contact.json', { ...form, title: 'Contact us' })
    const site = await ws.readJson('connections/website.json')
    await ws.writeJson('connections/website.json', { ...site, title: 'Website' })
    await ws.ok('push')
    state = await expectOnly(up.api, state, {
      changed: ['content/home', 'schemas/contactPage', 'forms/contact', 'connections/website'],
    })
    const homeAfter = await up.api.get('content', 'home')
    expect(homeAfter).toMatchObject(await ws.readJson('content/home.json'))
    // An update keeps the creation and its author; only the update's fields move.
    expect(homeAfter).toMatchObject({
      createDate: homeBefore.createDate,
      createdBy: homeBefore.createdBy,
      updatedBy: up.userId,
    })
    expect(state.schemas.get('contactPage')).toMatchObject({ icon: 'phone' })
    expect(state.forms.get('contact')).toMatchObject({ title: 'Contact us' })
    expect(state.connections.get('website')).toMatchObject({
      title: 'Website',
      deployer: { password: SECRET.CMS_SYNC_SECRET_DEMO_GIT_PASSWORD },
    })
    await ws.expectClean()
  })

  it('deletes go both ways: a file removed locally, an item removed on the server', async () => {
    // A leaf removed locally, another on the server.
    await rm(path.join(ws.root, 'content/imprint.json'))
    await up.api.remove('content', 'winter-menu')
    const mid = await serverState(up.api)
    const sync = await ws.ok('--json', 'sync')
    expect(
      (sync.json as { applied: Array<{ path: string; action: string }> }).applied
        .map((a) => [a.path, a.action])
        .sort(),
    ).toEqual([
      ['content/imprint.json', 'delete-remote'],
      ['content/winter-menu.json', 'delete-local'],
    ])
    state = await expectOnly(up.api, mid, { removed: ['content/imprint'] })
    await expect(ws.read('content/winter-menu.json')).rejects.toThrow(/ENOENT/)
    await ws.expectClean()
  })
})

function idOf(file: string): string {
  return path.basename(file, '.json')
}

function changesOf(json: unknown): Array<[string, string]> {
  return ((json as { changes: Array<{ path: string; action: string }> }).changes ?? [])
    .map((c): [string, string] => [c.path, c.action])
    .sort((a, b) => a[0].localeCompare(b[0]))
}
