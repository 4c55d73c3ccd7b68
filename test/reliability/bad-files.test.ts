// Bad input from files: invalid JSON, wrong types, a huge file, binary in a JSON folder,
// symlinks pointing outside the workspace, names that are not an encoded id, and two files
// claiming one id. Each is named with its problem, none reaches the server, none is changed,
// and a good edit next to them still goes through.

import { randomBytes } from 'node:crypto'
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { contentFile } from '../helpers/fixtures.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'
import { filesUnder, report } from './support.js'

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

describe.each(['spec', 'upstream'] as const)('bad local files (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test('every bad file is named, nothing of it reaches the server, and the good edit still goes', async () => {
    world = await syncedWorld(dialect)
    const w = world
    const outsideDir = path.join(w.root, '..', 'outside')
    await mkdir(outsideDir, { recursive: true })
    await writeFile(
      path.join(outsideDir, 'stolen.json'),
      json(contentFile('stolen', { properties: { title: 'secret' } })),
    )
    const bad: Record<string, string | Buffer> = {
      'content/broken.json': '{"id": "broken", "schemaId": ',
      'content/wrong-types.json': json({ ...contentFile('wrong-types'), sort: 'first', properties: 'x' }),
      'content/not-an-object.json': '[1, 2, 3]\n',
      'content/binary.json': randomBytes(4096),
      'content/huge.json': json(contentFile('huge', { properties: { title: 'x'.repeat(60 * 1024 * 1024) } })),
      'content/other-id.json': json(contentFile('home')),
      'content/CON.json': json(contentFile('CON')),
      'content/a%2.json': json(contentFile('a%2')),
      'schemas/broken.json': '{ nope',
    }
    for (const [rel, bytes] of Object.entries(bad)) await writeFile(w.file(rel), bytes)
    await symlink(path.join(outsideDir, 'stolen.json'), w.file('content/stolen.json'))
    await symlink(outsideDir, w.file('content/linked-dir'))
    await w.editJson('content/news.json', { properties: { title: 'good edit' } })
    const before = await filesUnder(
      w.root,
      (rel) => rel.startsWith('.cms-sync') || rel === 'content/news.json' || rel === 'cms-sync.lock',
    )
    const serverBefore = await w.serverState()

    const run = await w.cli('sync')
    expect(w.proxy.seen.filter((r) => r.includes('/huge'))).toEqual([])
    expect(run.stdout).toMatch(
      /content\/huge.json[\s\S]*the file is 61 MB; the server accepts JSON documents up to 50 MB/,
    )
    const said = run.stdout + run.stderr
    expect(run.exitCode, said).toBe(1)
    const named: string[] = []
    for (const rel of [...Object.keys(bad), 'content/stolen.json']) {
      if (said.includes(rel)) named.push(rel)
    }
    // Then each bad file is named (a symlink or a nameless id may be skipped, but never followed)
    for (const rel of [
      'content/broken.json',
      'content/wrong-types.json',
      'content/binary.json',
      'schemas/broken.json',
    ])
      expect(named, said).toContain(rel)
    // And nothing of them reached the server; the good edit did
    const server = await w.serverState()
    const content = server.content as Record<string, { properties: { title: string } }>
    expect(Object.keys(content).sort()).toEqual(Object.keys(serverBefore.content as object).sort())
    expect(content.news?.properties.title).toBe('good edit')
    expect(content.home).toEqual((serverBefore.content as Record<string, unknown>).home)
    expect(server.schemas).toEqual(serverBefore.schemas)
    // And no bad file was changed or removed, and the outside file is untouched
    expect(
      await filesUnder(
        w.root,
        (rel) => rel.startsWith('.cms-sync') || rel === 'content/news.json' || rel === 'cms-sync.lock',
      ),
    ).toEqual(before)
    expect(JSON.parse(await readFile(path.join(outsideDir, 'stolen.json'), 'utf8')).properties.title).toBe(
      'secret',
    )
    report(`bad-files/${dialect}`, {
      inputsTried: Object.keys(bad).length + 2,
      namedInOutput: named.length,
      reachedServer: 0,
      changedOrLost: 0,
    })
  })
})
