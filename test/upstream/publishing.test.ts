// Publishing on the real server: a filesystem connection deploys published content into a folder
// this test reads (`<rootPath>/content/<language>/<id>.json`), and each scenario checks what the
// site would serve afterwards: a publish from a file, an edit of a published item from a file, an
// unpublish from a file, a publish made in the CMS pulled as isPublished: true, and a publish the
// deployer fails, retried by the next run. The server is checked for damage after every step.

import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contentFile, SECTION_SCHEMA } from '../helpers/fixtures.js'
import {
  cleanupTemps,
  expectOnly,
  freshProject,
  initWorkspace,
  SETUP,
  type ServerState,
  serverState,
  tempDir,
  type Upstream,
  type Workspace,
} from './harness.js'

/** The server looks schedule tasks up by content id alone, across projects: ids of this file only. */
function page(id: string, title: string, extra: Record<string, unknown> = {}) {
  return contentFile(id, {
    properties: { title },
    settings: { publishing: { connectionId: 'pub-site' } },
    ...extra,
  })
}

function connection(rootPath: string) {
  return {
    id: 'pub-site',
    title: 'Site',
    url: '',
    processor: { alias: 'json', fileExtension: '.json' },
    deployer: { alias: 'filesystem', rootPath, paths: { content: 'content', media: 'media' } },
  }
}

describe.skipIf(!SETUP)('publishing (real upstream server)', () => {
  let up: Upstream
  let ws: Workspace
  let state: ServerState
  let site: string

  /** What the site serves for an item: its deployed file, or undefined. */
  async function deployed(id: string): Promise<Record<string, unknown> | undefined> {
    try {
      return JSON.parse(await readFile(path.join(site, 'content', 'en', `${id}.json`), 'utf8'))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }

  beforeAll(async () => {
    up = await freshProject('publishing')
    site = await tempDir('site')
    await up.api.put('connections', connection(site))
    ws = await initWorkspace(up, 'publishing')
    // Connections stay the server's here: the failing scenario changes one behind the workspace.
    await writeFile(
      path.join(ws.root, 'cms-sync.yaml'),
      (await readFile(path.join(ws.root, 'cms-sync.yaml'), 'utf8')).replace(
        /^resources: .*$/m,
        'resources: [schemas, content]',
      ),
    )
    await ws.writeJson('schemas/section.json', SECTION_SCHEMA)
    for (const id of ['pub-home', 'pub-news', 'pub-shop'])
      await ws.writeJson(`content/${id}.json`, page(id, id))
    await ws.ok('sync')
    state = await serverState(up.api)
  })
  afterAll(cleanupTemps)

  it('isPublished: true in a file is deployed by push, and nothing is left to sync', async () => {
    await ws.writeJson('content/pub-home.json', page('pub-home', 'Welcome', { isPublished: true }))
    const push = await ws.ok('--json', 'push')
    expect((push.json as { applied: unknown[] }).applied).toEqual([
      expect.objectContaining({ path: 'content/pub-home.json', action: 'push' }),
      expect.objectContaining({ path: 'content/pub-home.json', action: 'publish', connection: 'pub-site' }),
    ])
    state = await expectOnly(up.api, state, { changed: ['content/pub-home'] })
    expect(state.content.get('pub-home')).toMatchObject({
      isPublished: true,
      properties: { title: 'Welcome' },
    })
    expect(await deployed('pub-home')).toMatchObject({ id: 'pub-home', title: 'Welcome', language: 'en' })
    await ws.expectClean()
  })

  it('an edit of a published item from a file re-publishes it, keeping its schedule', async () => {
    // A date set in the CMS: the listing shows it as null, the publish must not cancel it.
    const home = await up.api.get('content', 'pub-home')
    await up.api.put('content', { ...home, unpublishOn: '2031-01-01T00:00:00.000Z' })
    await ws.ok('pull')
    state = await serverState(up.api)
    expect(await ws.readJson('content/pub-home.json')).toMatchObject({
      unpublishOn: '2031-01-01T00:00:00.000Z',
    })
    await ws.writeJson('content/pub-home.json', {
      ...(await ws.readJson('content/pub-home.json')),
      properties: { title: 'Welcome back' },
    })
    await ws.ok('push')
    state = await expectOnly(up.api, state, { changed: ['content/pub-home'] })
    expect(await deployed('pub-home')).toMatchObject({ title: 'Welcome back' })
    expect(await up.api.get('content', 'pub-home')).toMatchObject({
      isPublished: true,
      unpublishOn: '2031-01-01T00:00:00.000Z',
    })
    await ws.expectClean()
  })

  it('isPublished: false in a file unpublishes: the deployed copy is gone', async () => {
    expect(await deployed('pub-home')).toBeDefined()
    await ws.writeJson('content/pub-home.json', {
      ...(await ws.readJson('content/pub-home.json')),
      isPublished: false,
    })
    await ws.ok('push')
    state = await expectOnly(up.api, state, { changed: ['content/pub-home'] })
    expect(state.content.get('pub-home')).toMatchObject({ isPublished: false })
    expect(await deployed('pub-home')).toBeUndefined()
    await ws.expectClean()
  })

  it('a publish made in the CMS is pulled as isPublished: true', async () => {
    // What the CMS's editor sends: the item read by id.
    await up.api.ok('POST', 'content/publish', await up.api.get('content', 'pub-news'))
    expect(await deployed('pub-news')).toMatchObject({ title: 'pub-news' })
    state = await serverState(up.api)
    const pull = await ws.ok('--json', 'pull')
    expect((pull.json as { applied: unknown[] }).applied).toEqual([
      expect.objectContaining({ path: 'content/pub-news.json', action: 'pull' }),
    ])
    expect(await ws.readJson('content/pub-news.json')).toMatchObject({ isPublished: true })
    state = await expectOnly(up.api, state)
    await ws.expectClean()
  })

  it('a publish the server refuses is that item’s failure: the write stands, and the next run publishes', async () => {
    // The item names a connection the server does not have (yet). A deployer's own failure is no
    // scenario here: the server answers a file-system error with its errno as the HTTP status,
    // which crashes the server process (upstream-server.md §12.3, §12.30).
    const shop = page('pub-shop', 'Shop is open', {
      isPublished: true,
      settings: { publishing: { connectionId: 'pub-later' } },
    })
    await ws.writeJson('content/pub-shop.json', shop)
    const push = await ws.cli('--json', 'push')
    expect(push.code, push.stderr).toBe(1)
    const out = push.json as { applied: unknown[]; failed: Array<{ error: string }> }
    expect(out.applied).toEqual([expect.objectContaining({ path: 'content/pub-shop.json', action: 'push' })])
    expect(out.failed).toEqual([
      expect.objectContaining({ path: 'content/pub-shop.json', action: 'publish', connection: 'pub-later' }),
    ])
    expect(out.failed[0]!.error).toMatch(
      /content\/pub-shop\.json through connection "pub-later" failed: Connection by id "pub-later" was not found/,
    )
    state = await expectOnly(up.api, state, { changed: ['content/pub-shop'] })
    expect(state.content.get('pub-shop')).toMatchObject({ properties: { title: 'Shop is open' } })
    expect(await deployed('pub-shop')).toBeUndefined()
    // The state remembers that the deployed copy is behind.
    const status = await ws.cli('--json', 'status')
    expect((status.json as { changes: unknown[] }).changes).toEqual([
      expect.objectContaining({ path: 'content/pub-shop.json', action: 'publish', local: 'unchanged' }),
    ])
    await up.api.put('connections', { ...connection(site), id: 'pub-later' })
    state = await serverState(up.api)
    const retry = await ws.ok('--json', 'push')
    expect((retry.json as { applied: unknown[] }).applied).toEqual([
      expect.objectContaining({ path: 'content/pub-shop.json', action: 'publish' }),
    ])
    state = await expectOnly(up.api, state, { changed: ['content/pub-shop'] })
    expect(await deployed('pub-shop')).toMatchObject({ title: 'Shop is open' })
    await ws.expectClean()
  })

  it('an item without any connection fails its publish with the server’s words', async () => {
    await ws.writeJson('content/pub-news.json', {
      ...(await ws.readJson('content/pub-news.json')),
      properties: { title: 'News, again' },
      settings: { publishing: { connectionId: '' } },
    })
    const push = await ws.cli('--json', 'push')
    expect(push.code, push.stderr).toBe(1)
    const out = push.json as { failed: Array<{ error: string }> }
    expect(out.failed).toEqual([
      expect.objectContaining({ path: 'content/pub-news.json', action: 'publish', connection: null }),
    ])
    expect(out.failed[0]!.error).toMatch(/No connections defined for content "pub-news"/)
    state = await expectOnly(up.api, state, { changed: ['content/pub-news'] })
    expect(state.content.get('pub-news')).toMatchObject({ properties: { title: 'News, again' } })
    // The site still serves the last deployed text: the failure said so; nothing claims otherwise.
    expect(await deployed('pub-news')).toMatchObject({ title: 'pub-news' })
    // Named again, the connection takes the publish still owed.
    await ws.writeJson('content/pub-news.json', {
      ...(await ws.readJson('content/pub-news.json')),
      settings: { publishing: { connectionId: 'pub-site' } },
    })
    await ws.ok('push')
    state = await expectOnly(up.api, state, { changed: ['content/pub-news'] })
    expect(await deployed('pub-news')).toMatchObject({ title: 'News, again' })
    await ws.expectClean()
  })

  it('a git deployer’s failure is told with the server’s words, never with the repository password', async () => {
    await up.api.put('connections', {
      id: 'pub-git',
      title: 'Git',
      url: '',
      processor: { alias: 'json', fileExtension: '.json' },
      deployer: {
        alias: 'git',
        repo: 'https://git.invalid/site.git',
        branch: 'main',
        username: 'deploy',
        password: 'pub-secret-pw',
        paths: { content: 'content', media: 'media' },
      },
    })
    state = await serverState(up.api)
    await ws.writeJson(
      'content/pub-git.json',
      page('pub-git', 'Via git', {
        isPublished: true,
        settings: { publishing: { connectionId: 'pub-git' } },
      }),
    )
    const push = await ws.cli('--json', 'push')
    expect(push.code, push.stderr).toBe(1)
    const out = push.json as { failed: Array<{ error: string; action: string }> }
    expect(out.failed.map((f) => f.action)).toEqual(['publish'])
    expect(out.failed[0]!.error).toMatch(/through connection "pub-git" failed: .*git/)
    expect(push.stdout + push.stderr).not.toContain('pub-secret-pw')
    const logDir = path.join(ws.root, '.cms-sync', 'logs')
    for (const name of await readdir(logDir))
      expect(await readFile(path.join(logDir, name), 'utf8'), name).not.toContain('pub-secret-pw')
    state = await expectOnly(up.api, state, { added: ['content/pub-git'] })
  })
})
