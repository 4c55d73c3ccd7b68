// Publishing end to end, both dialects (design.md "Publishing"): a content item's isPublished
// is carried out through the server's publish and unpublish requests, which deploy the item
// through its connection (the emulator's filesystem deployer writes it under a folder this test
// reads, as the real server's does), and a push of a published item deploys it again.

import { readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { contentOf, startWorld, type World } from '../helpers/sync-world.js'
import { waitFor } from '../watch/helpers.js'

/** A filesystem connection: published content lands in <deployRoot>/<rootPath>/content/<lang>/<id>.json. */
function filesystemConnection(id: string, rootPath: string) {
  return {
    id,
    title: `Site ${id}`,
    url: '',
    processor: { alias: 'json' },
    deployer: { alias: 'filesystem', rootPath, paths: { content: 'content', media: 'media' } },
  }
}

const publishingThrough = (connectionId: string, applyToChildren = false) => ({
  publishing: { connectionId, ...(applyToChildren ? { applyToChildren: true } : {}) },
})

describe.each(['spec', 'upstream'] as const)('publishing (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  /** What the site serves for an item: the deployed file, or undefined when there is none. */
  async function deployed(id: string, root = 'site'): Promise<Record<string, unknown> | undefined> {
    const file = path.join(world.emulator.deployRoot, root, 'content', 'en', `${id}.json`)
    try {
      return JSON.parse(await readFile(file, 'utf8'))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }

  /** A synced workspace whose items publish through the filesystem connection "site". */
  async function syncedWithSite(): Promise<World> {
    world = await startWorld(dialect, { content: [] })
    await world.server.put('connection', 'site', filesystemConnection('site', 'site'))
    for (const id of ['home', 'news', 'contact', 'shop'])
      await world.server.put('content', id, contentOf(id, { settings: publishingThrough('site') }))
    const first = await world.cli('sync')
    expect(first.exitCode, first.stderr).toBe(0)
    return world
  }

  async function publishedOnServer(id: string): Promise<void> {
    const current = await world.server.get('content', id)
    await world.server.publish('publish', current!)
  }

  test('isPublished set in a file is carried out: the push deploys the item, the summary counts it', async () => {
    const w = await syncedWithSite()
    await w.editJson('content/home.json', { isPublished: true, properties: { title: 'Welcome' } })
    const run = await w.cli('push')
    expect(run.exitCode, run.stderr).toBe(0)
    expect(await deployed('home')).toMatchObject({ id: 'home', title: 'Welcome', language: 'en' })
    expect(await w.server.get('content', 'home')).toMatchObject({ isPublished: true })
    expect(run.stdout).toMatch(/publish\s+content\/home\.json\s+\(through connection "site"\)/)
    expect(run.stdout).toMatch(/push: applied 2 \(1 publish\), 0 conflicts, 0 failed/)
    // The server's answer is the new base: nothing is left to sync, and nothing deploys again.
    const status = await w.cli('status', '--json')
    expect(status.json.changes).toEqual([])
  })

  test('an edit of a published item re-publishes it, so the site never serves older text', async () => {
    const w = await syncedWithSite()
    await publishedOnServer('news')
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(await w.readJson('content/news.json')).toMatchObject({ isPublished: true })
    await w.editJson('content/news.json', { properties: { title: 'News, edited' } })
    const run = await w.cli('push', '--json')
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.json.applied).toEqual([
      expect.objectContaining({ path: 'content/news.json', action: 'push' }),
      expect.objectContaining({ path: 'content/news.json', action: 'publish', connection: 'site' }),
    ])
    expect(await deployed('news')).toMatchObject({ title: 'News, edited' })
  })

  test('publishing: manual deploys nothing, isPublished is written as a field; --publish overrides it for one run', async () => {
    const w = await syncedWithSite()
    await publishedOnServer('news')
    expect((await w.cli('pull')).exitCode).toBe(0)
    await writeFile(
      w.file('cms-sync.yaml'),
      `${await readFile(w.file('cms-sync.yaml'), 'utf8')}publishing: manual\n`,
    )
    await w.editJson('content/news.json', { properties: { title: 'Draft text' } })
    await w.editJson('content/home.json', { isPublished: true })
    const manual = await w.cli('push', '--json')
    expect(manual.exitCode, manual.stderr).toBe(0)
    expect(manual.json.applied.map((i: { action: string }) => i.action)).toEqual(['push', 'push'])
    expect(await deployed('news')).toMatchObject({ title: 'news' })
    expect(await deployed('home')).toBeUndefined()
    expect(await w.server.get('content', 'home')).toMatchObject({ isPublished: true })
    await w.editJson('content/news.json', { properties: { title: 'Final text' } })
    const flagged = await w.cli('push', '--publish', '--json')
    expect(flagged.json.applied.map((i: { action: string }) => i.action)).toEqual(['push', 'publish'])
    expect(await deployed('news')).toMatchObject({ title: 'Final text' })
  })

  test('--no-publish deploys nothing for one run: neither a published item’s edit nor a flag set in a file', async () => {
    const w = await syncedWithSite()
    await publishedOnServer('shop')
    expect((await w.cli('pull')).exitCode).toBe(0)
    await w.editJson('content/shop.json', { properties: { title: 'Shop, not yet live' } })
    await w.editJson('content/contact.json', { isPublished: true })
    const run = await w.cli('push', '--no-publish', '--json')
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.json.applied.map((i: { action: string }) => i.action)).toEqual(['push', 'push'])
    expect(await deployed('shop')).toMatchObject({ title: 'shop' })
    expect(await deployed('contact')).toBeUndefined()
  })

  test('isPublished cleared in a file unpublishes: the deployed copy is removed', async () => {
    const w = await syncedWithSite()
    await publishedOnServer('contact')
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(await deployed('contact')).toBeDefined()
    await w.editJson('content/contact.json', { isPublished: false })
    const run = await w.cli('push', '--json')
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.json.applied.map((i: { action: string }) => i.action)).toEqual(['push', 'unpublish'])
    expect(await deployed('contact')).toBeUndefined()
    expect(await w.server.get('content', 'contact')).toMatchObject({ isPublished: false })
  })

  test('a publish made in the CMS is pulled as isPublished: true, and deploys nothing more', async () => {
    const w = await syncedWithSite()
    await publishedOnServer('home')
    const run = await w.cli('sync', '--json')
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.json.applied).toEqual([expect.objectContaining({ path: 'content/home.json', action: 'pull' })])
    expect(await w.readJson('content/home.json')).toMatchObject({ isPublished: true })
  })

  test('a published item deleted locally is unpublished before it is deleted', async () => {
    const w = await syncedWithSite()
    await publishedOnServer('shop')
    expect((await w.cli('pull')).exitCode).toBe(0)
    await w.remove('content/shop.json')
    const run = await w.cli('push', '--json')
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.json.applied.map((i: { action: string }) => i.action)).toEqual(['unpublish', 'delete-remote'])
    expect(await deployed('shop')).toBeUndefined()
    expect(await w.server.get('content', 'shop')).toBeUndefined()
  })

  test('a published item deleted on the server and brought back with resolve --keep local is published again', async () => {
    const w = await syncedWithSite()
    await publishedOnServer('shop')
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(await deployed('shop')).toBeDefined()
    // Another client deletes it (unpublishing it first, as cms-sync does): the site no longer has it
    await w.server.publish('unpublish', (await w.server.get('content', 'shop'))!)
    await w.server.remove('content', 'shop')
    expect(await deployed('shop')).toBeUndefined()
    // When the deletion is dropped, keeping the file, which says isPublished: true
    expect(await w.readJson('content/shop.json')).toMatchObject({ isPublished: true })
    const run = await w.cli('resolve', 'content/shop.json', '--keep', 'local', '--json')
    expect(run.exitCode, run.stderr).toBe(0)
    // Then the item is created again and published: the site serves what the CMS says is published
    expect(run.json.applied.map((i: { action: string }) => i.action)).toEqual(['push', 'publish'])
    expect(await w.server.get('content', 'shop')).toMatchObject({ isPublished: true })
    expect(await deployed('shop')).toMatchObject({ id: 'shop' })
    expect((await w.cli('status', '--json')).json.changes).toEqual([])
  })

  test('a published item no connection publishes, deleted locally: the refusal says how to delete it, and that way works', async () => {
    world = await startWorld(dialect)
    const w = world
    await w.server.put('content', 'loose', contentOf('loose', { isPublished: true }))
    expect((await w.cli('sync')).exitCode).toBe(0)
    await w.remove('content/loose.json')
    const run = await w.cli('push', '--json')
    expect(run.exitCode).toBe(1)
    const refused = run.json.failed.find((i: { action: string }) => i.action === 'delete-remote')
    // No unpublish can ever succeed for it: "run again once it is unpublished" was a dead end
    expect(refused.error).not.toMatch(/run again once it is unpublished/)
    expect(refused.error).toMatch(/names no connection.*cms-sync push --no-publish content\/loose\.json/)
    const again = await w.cli('push', '--no-publish', 'content/loose.json')
    expect(again.exitCode, again.stderr).toBe(0)
    expect(await w.server.get('content', 'loose')).toBeUndefined()
  })

  test('a published item whose unpublish fails is not deleted: the site would keep serving it', async () => {
    const w = await syncedWithSite()
    await publishedOnServer('shop')
    expect((await w.cli('pull')).exitCode).toBe(0)
    await w.server.remove('connection', 'site')
    await w.remove('content/shop.json')
    const run = await w.cli('push', '--json')
    expect(run.exitCode).toBe(1)
    expect(run.json.failed.map((i: { action: string }) => i.action)).toEqual(['unpublish', 'delete-remote'])
    expect(run.json.failed[0].error).toMatch(/Connection by id "site" was not found/)
    expect(run.json.failed[1].error).toMatch(
      /not deleted on the server: it is published and its unpublish failed/,
    )
    expect(await w.server.get('content', 'shop')).toMatchObject({ isPublished: true })
    expect(await deployed('shop')).toBeDefined()
    // With the connection back, the next push unpublishes, then deletes.
    await w.server.put('connection', 'site', filesystemConnection('site', 'site'))
    const retry = await w.cli('push', '--json')
    expect(retry.exitCode, retry.stderr).toBe(0)
    expect(retry.json.applied.map((i: { action: string }) => i.action)).toEqual([
      'unpublish',
      'delete-remote',
    ])
    expect(await deployed('shop')).toBeUndefined()
    expect(await w.server.get('content', 'shop')).toBeUndefined()
  })

  test('status, --dry-run and diff show publishes as actions of their own, and change nothing', async () => {
    const w = await syncedWithSite()
    await w.editJson('content/home.json', { isPublished: true })
    const status = await w.cli('status', '--json')
    expect(status.exitCode, status.stderr).toBe(0)
    expect(status.json.changes).toEqual([
      expect.objectContaining({ path: 'content/home.json', action: 'push' }),
      expect.objectContaining({ path: 'content/home.json', action: 'publish', connection: 'site' }),
    ])
    const text = await w.cli('status')
    expect(text.stdout).toMatch(/publish\s+content\/home\.json/)
    const dry = await w.cli('push', '--dry-run')
    expect(dry.stdout).toMatch(/publish\s+content\/home\.json/)
    expect(dry.stdout).toMatch(/would apply 2 \(1 publish\)/)
    const diff = await w.cli('diff')
    expect(diff.stdout).toMatch(/publish content\/home\.json/)
    expect(await deployed('home')).toBeUndefined()
    expect(await w.server.get('content', 'home')).toMatchObject({ isPublished: false })
  })

  test('a failing publish is that item’s failure only: its write stands, the message names item, connection and the server’s words, the next run retries', async () => {
    const w = await syncedWithSite()
    // The deployer cannot write: its content folder is a file.
    await world.server.put('connection', 'site', filesystemConnection('site', 'blocked'))
    const { mkdir } = await import('node:fs/promises')
    await mkdir(w.emulator.deployRoot, { recursive: true })
    await writeFile(path.join(w.emulator.deployRoot, 'blocked'), 'not a folder')
    await w.editJson('content/home.json', { isPublished: true, properties: { title: 'Launch' } })
    await w.editJson('content/news.json', { properties: { title: 'Other edit' } })
    const run = await w.cli('push', '--json')
    expect(run.exitCode).toBe(1)
    expect(run.json.applied.map((i: { path: string; action: string }) => `${i.action} ${i.path}`)).toEqual([
      'push content/home.json',
      'push content/news.json',
    ])
    expect(run.json.failed).toEqual([
      expect.objectContaining({ path: 'content/home.json', action: 'publish', connection: 'site' }),
    ])
    expect(run.json.failed[0].error).toMatch(
      /content\/home\.json through connection "site" failed: .*(ENOTDIR|EEXIST|not a directory)/,
    )
    expect(await w.server.get('content', 'home')).toMatchObject({ properties: { title: 'Launch' } })
    // The state remembers the deployed copy is behind: status says so, and the next run publishes.
    const status = await w.cli('status', '--json')
    expect(status.json.changes).toEqual([
      expect.objectContaining({
        path: 'content/home.json',
        action: 'publish',
        local: 'unchanged',
        remote: 'unchanged',
      }),
    ])
    await world.server.put('connection', 'site', filesystemConnection('site', 'site'))
    const retry = await w.cli('push', '--json')
    expect(retry.exitCode, retry.stderr).toBe(0)
    expect(retry.json.applied).toEqual([
      expect.objectContaining({ path: 'content/home.json', action: 'publish' }),
    ])
    expect(await deployed('home')).toMatchObject({ title: 'Launch' })
    expect((await w.cli('status', '--json')).json.changes).toEqual([])
  })

  test('an item without a connection fails its publish by name, with the server’s words', async () => {
    const w = await syncedWithSite()
    await w.editJson('content/contact.json', { isPublished: true, settings: publishingThrough('') })
    const dry = await w.cli('status', '--json')
    expect(dry.exitCode).toBe(1)
    expect(dry.json.changes).toContainEqual(
      expect.objectContaining({
        path: 'content/contact.json',
        action: 'publish',
        connection: null,
        error: expect.stringMatching(/no connection/),
      }),
    )
    const run = await w.cli('push', '--json')
    expect(run.exitCode).toBe(1)
    expect(run.json.failed).toEqual([
      expect.objectContaining({ path: 'content/contact.json', action: 'publish' }),
    ])
    expect(run.json.failed[0].error).toMatch(
      /content\/contact\.json through no connection named .*failed: No connections defined for content "contact"/,
    )
  })

  test('a parent whose publishing settings apply to children decides the connection its children publish through', async () => {
    world = await startWorld(dialect, { content: [] })
    const w = world
    await w.server.put('connection', 'site', filesystemConnection('site', 'site'))
    await w.server.put('connection', 'docs', filesystemConnection('docs', 'docs'))
    await w.server.put('content', 'guide', contentOf('guide', { settings: publishingThrough('docs', true) }))
    await w.server.put(
      'content',
      'chapter',
      contentOf('chapter', { parentId: 'guide', settings: publishingThrough('site') }),
    )
    await w.server.put('content', 'orphan', contentOf('orphan', { settings: publishingThrough('') }))
    expect((await w.cli('sync')).exitCode).toBe(0)
    await w.editJson('content/chapter.json', { isPublished: true })
    const status = await w.cli('status', '--json')
    expect(status.json.changes).toContainEqual(
      expect.objectContaining({
        path: 'content/chapter.json',
        action: 'publish',
        connection: 'docs',
        governedBy: 'guide',
      }),
    )
    const run = await w.cli('push')
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/through connection "docs", as parent "guide" decides/)
    expect(await deployed('chapter', 'docs')).toMatchObject({ id: 'chapter' })
    expect(await deployed('chapter', 'site')).toBeUndefined()
  })

  test('a publish keeps the schedule: publishOn/unpublishOn set in the CMS survive a push that re-publishes', async () => {
    const w = await syncedWithSite()
    const future = new Date(Date.now() + 7 * 86_400_000).toISOString()
    const current = await w.server.get('content', 'news')
    await w.server.put('content', 'news', { ...current!, unpublishOn: future })
    await publishedOnServer('news')
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(await w.readJson('content/news.json')).toMatchObject({ isPublished: true, unpublishOn: future })
    await w.editJson('content/news.json', { properties: { title: 'Until next week' } })
    const run = await w.cli('push', '--json')
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.json.applied.map((i: { action: string }) => i.action)).toEqual(['push', 'publish'])
    expect(await w.server.get('content', 'news')).toMatchObject({ unpublishOn: future, isPublished: true })
    expect(await deployed('news')).toMatchObject({ title: 'Until next week' })
  })

  test('publishOn set in a file goes through the schedule: the item deploys at its time, and is pulled as published', async () => {
    const w = await syncedWithSite()
    const soon = new Date(Date.now() + 1000).toISOString()
    await w.editJson('content/shop.json', { publishOn: soon })
    const run = await w.cli('push', '--json')
    expect(run.exitCode, run.stderr).toBe(0)
    // Nothing deploys now: the flag did not change, the schedule does it.
    expect(run.json.applied.map((i: { action: string }) => i.action)).toEqual(['push'])
    expect(await deployed('shop')).toBeUndefined()
    // The server's schedule runs the task once its time has come (a read is enough to see it).
    await waitFor(async () => (await w.server.get('content', 'shop'))?.isPublished === true, {
      what: 'the scheduled publish',
      intervalMs: 100,
    })
    expect(await deployed('shop')).toMatchObject({ title: 'shop' })
    const pull = await w.cli('pull', '--json')
    expect(pull.exitCode, pull.stderr).toBe(0)
    expect(await w.readJson('content/shop.json')).toMatchObject({ isPublished: true, publishOn: null })
    expect((await w.cli('status', '--json')).json.changes).toEqual([])
  })

  test('the emulator keeps its deployer inside its deploy folder', async () => {
    world = await startWorld(dialect, { content: [] })
    await world.server.put('connection', 'out', filesystemConnection('out', '../../outside'))
    await world.server.put('content', 'home', contentOf('home', { settings: publishingThrough('out') }))
    const current = await world.server.get('content', 'home')
    await expect(world.server.publish('publish', current!)).rejects.toThrow(
      /outside the emulator's deploy folder/,
    )
    await expect(stat(path.join(world.emulator.deployRoot, '..', '..', 'outside'))).rejects.toThrow()
  })
})
