// A whole environment, every kind, with `dialect: auto` against both emulator dialects: a pull
// of the seeded example workspace is byte-identical to it (media and media.yaml included), and
// then one local change per kind goes up and comes back without an echo.

import { readdir, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { createMediaApi } from '../../src/remote/media.js'
import { startWorld, type World } from '../helpers/sync-world.js'

const EXAMPLE = path.join(import.meta.dirname, '..', '..', 'example-workspace')
const ALL = ['schemas', 'content', 'media', 'forms', 'connections']

async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name
    if (entry.isDirectory()) out.push(...(await filesUnder(path.join(dir, entry.name), rel)))
    else out.push(rel)
  }
  return out
}

describe.each(['spec', 'upstream'] as const)('every kind with dialect: auto (%s server)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test('every published page of the example names a connection: its first edit publishes, never fails for want of one', async () => {
    world = await startWorld(dialect, {
      seedDir: EXAMPLE,
      resources: ['schemas', 'content'],
      configDialect: 'auto',
    })
    const w = world
    expect((await w.cli('sync')).exitCode).toBe(0)
    // A new user's first edit of each published page (the README's demo seeds these)
    const published: string[] = []
    for (const rel of (await filesUnder(path.join(EXAMPLE, 'content'))).map((f) => `content/${f}`)) {
      const item = await w.readJson(rel)
      if (item.isPublished !== true) continue
      published.push(rel)
      await w.editJson(rel, { sort: 7 })
    }
    expect(published).toContain('content/legal.json')
    const pushed = await w.cli('--json', 'push')
    expect(pushed.json.failed, JSON.stringify(pushed.json.failed)).toEqual([])
    expect(pushed.exitCode).toBe(0)
    const publishes = pushed.json.applied.filter((a: { action: string }) => a.action === 'publish')
    expect(publishes.map((a: { path: string }) => a.path).sort()).toEqual(published.sort())
  })

  test('a pull of the seeded example equals its files; one edit per kind round-trips cleanly', async () => {
    world = await startWorld(dialect, { seedDir: EXAMPLE, resources: ALL, configDialect: 'auto' })
    const w = world
    const pulled = await w.cli('--json', 'sync')
    expect(pulled.exitCode, pulled.stderr).toBe(0)
    const tree = await w.tree()
    const expected = (await filesUnder(EXAMPLE)).filter((rel) => rel !== 'cms-sync.yaml')
    for (const rel of expected) {
      const bytes = await readFile(path.join(EXAMPLE, rel))
      const mine = await readFile(w.file(rel)).catch(() => undefined)
      expect(mine && Buffer.compare(mine, bytes), rel).toBe(0)
    }
    expect(
      Object.keys(tree)
        // The lock names this test's server: it is checked in committed-base.test.ts.
        .filter((rel) => rel !== 'cms-sync.yaml' && rel !== 'cms-sync.lock')
        .sort(),
    ).toEqual(expected.sort())
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])

    // One change per kind
    await w.editJson('schemas/seoMeta.json', { name: 'SEO (edited)' })
    await w.editJson('content/about.json', { sort: 42 })
    await w.editJson('forms/contact.json', { title: 'Contact us' })
    await w.editJson('connections/website.json', { title: 'Website (edited)' })
    await rename(w.file('media/logo.svg'), w.file('media/images/logo renamed.svg'))
    await writeFile(w.file('media/images/new file.txt'), 'new')
    w.extraEnv.CMS_SYNC_SECRET_DEMO_GIT_PASSWORD = 'demo-password'
    const pushed = await w.cli('--json', 'sync')
    expect(pushed.exitCode, JSON.stringify(pushed.json)).toBe(0)
    expect(pushed.json.applied.map((a: { kind: string }) => a.kind).sort()).toEqual([
      'connection',
      'content',
      // about.json is published: its edit is published again, through the git connection its
      // governing parent (home) names.
      'content',
      'form',
      'media',
      'media',
      'schema',
    ])
    expect(pushed.json.applied).toContainEqual(
      expect.objectContaining({
        path: 'content/about.json',
        action: 'publish',
        connection: 'website',
        governedBy: 'home',
      }),
    )
    expect((await w.server.get('form', 'contact'))?.title).toBe('Contact us')
    expect(await w.server.get('connection', 'website')).toMatchObject({
      title: 'Website (edited)',
      deployer: { password: 'demo-password' },
    })
    expect(await readFile(w.file('connections/website.json'), 'utf8')).not.toContain('demo-password')
    const logo = (await createMediaApi(w.server).get('f60718293a4b5c6d'))!
    expect(logo).toMatchObject({ name: 'logo renamed.svg', folder: 'images' })
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])
  })
})
