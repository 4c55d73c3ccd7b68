// Under watch, the publishes of an item wait for its saves to pause (watch.publishQuietMs): each
// save is pushed at once, but a burst of saves of a published item is one publish, of the last
// text. Both dialects; the emulator's filesystem deployer writes what the site would serve.

import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { contentOf, startWorld, type World } from '../helpers/sync-world.js'
import { watchInProcess } from '../helpers/watch.js'
import { waitFor } from '../watch/helpers.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const SITE = {
  id: 'site',
  title: 'Site',
  url: '',
  processor: { alias: 'json' },
  deployer: { alias: 'filesystem', rootPath: 'site', paths: { content: 'content', media: 'media' } },
}

describe.each(['spec', 'upstream'] as const)('watch publishes after quiet (%s dialect)', (dialect) => {
  async function publishedWorld(): Promise<World> {
    const w = await startWorld(dialect, { content: [] })
    cleanups.push(() => w.close())
    await w.server.put('connection', 'site', SITE)
    await w.server.put(
      'content',
      'news',
      contentOf('news', { settings: { publishing: { connectionId: 'site' } } }),
    )
    await w.server.publish('publish', (await w.server.get('content', 'news'))!)
    const first = await w.cli('sync')
    expect(first.exitCode, first.stderr).toBe(0)
    return w
  }

  const deployedTitle = async (w: World) =>
    JSON.parse(await readFile(path.join(w.emulator.deployRoot, 'site', 'content', 'en', 'news.json'), 'utf8'))
      .title as string

  test('a burst of saves of a published item is pushed save by save, and published once, with the last text', async () => {
    const w = await publishedWorld()
    const config = w.file('cms-sync.yaml')
    await writeFile(
      config,
      `${await readFile(config, 'utf8')}watch: { debounceMs: 50, pollSeconds: 3600, publishQuietMs: 3000 }\n`,
    )
    const d = watchInProcess(w.root, w.env)
    cleanups.push(() => d.stop())
    await d.waitForEvent({ event: 'reconciled' })
    const start = w.proxy.seen.length
    for (const title of ['Draft 1', 'Draft 2', 'Final']) {
      const pushed = d.events.filter((e) => e.event === 'pushed').length
      await w.editJson('content/news.json', { properties: { title } })
      // Each save is pushed on its own, and none is published while the saves go on.
      await waitFor(() => d.events.filter((e) => e.event === 'pushed').length > pushed, {
        what: `the push of "${title}"`,
      })
      expect(d.events.filter((e) => e.event === 'published')).toEqual([])
    }
    const published = await d.waitForEvent({ event: 'published', path: 'content/news.json' }, 10_000)
    expect(published).toMatchObject({ action: 'publish' })
    expect(await deployedTitle(w)).toBe('Final')
    const publishes = w.proxy.seen.slice(start).filter((r) => r === 'POST /api/demo/live/content/publish')
    expect(publishes).toHaveLength(1)
    // Published: the state owes nothing any more, and the server holds the last text as published.
    expect(await w.server.get('content', 'news')).toMatchObject({
      isPublished: true,
      properties: { title: 'Final' },
    })
    await d.stop()
    const status = await w.cli('status', '--json')
    expect(status.json.changes).toEqual([])
  })
  test('a save that publishes a child goes through the connection its governing parent names', async () => {
    const w = await startWorld(dialect, { content: [] })
    cleanups.push(() => w.close())
    await w.server.put('connection', 'docs', {
      ...SITE,
      id: 'docs',
      deployer: { ...SITE.deployer, rootPath: 'docs' },
    })
    const governs = { publishing: { connectionId: 'docs', applyToChildren: true } }
    await w.server.put('content', 'guide', contentOf('guide', { settings: governs }))
    await w.server.put('content', 'chapter', contentOf('chapter', { parentId: 'guide' }))
    expect((await w.cli('sync')).exitCode).toBe(0)
    const config = w.file('cms-sync.yaml')
    await writeFile(
      config,
      `${await readFile(config, 'utf8')}watch: { debounceMs: 50, pollSeconds: 3600, publishQuietMs: 0 }\n`,
    )
    const d = watchInProcess(w.root, w.env)
    cleanups.push(() => d.stop())
    await d.waitForEvent({ event: 'reconciled' })
    await w.editJson('content/chapter.json', { isPublished: true })
    // The batch read only the chapter; its parent, read by id, decides the connection.
    const published = await d.waitForEvent({ event: 'published', path: 'content/chapter.json' })
    expect(published).toMatchObject({ action: 'publish', connection: 'docs' })
    const file = path.join(w.emulator.deployRoot, 'docs', 'content', 'en', 'chapter.json')
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ id: 'chapter' })
  })
})
