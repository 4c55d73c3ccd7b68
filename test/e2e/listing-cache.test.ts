// A listing that did not change costs one 304: every run keeps the listings of schemas and
// content in .cms-sync/listings/ with their ETag and asks with If-None-Match next time (issue 17
// step 3). What must hold: the answer is the same as a full read, a change on the server is
// seen, a damaged kept listing is never used, and connection settings (secrets) and forms
// (people's entries) are never kept on disk.

import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { startWorld, syncedWorld, type World } from '../helpers/sync-world.js'

const LISTINGS = /^GET \/api\/demo\/live\/(schemas|content|media) (\d+)$/

describe.each(['spec', 'upstream'] as const)('kept listings (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  /** The status of each listing the command read, e.g. { content: 304, schemas: 304 }. */
  async function listingAnswers(w: World, ...args: string[]) {
    const start = w.proxy.answered.length
    const run = await w.cli(...args)
    const answers: Record<string, number> = {}
    for (const line of w.proxy.answered.slice(start)) {
      const m = LISTINGS.exec(line)
      if (m) answers[m[1]!] = Number(m[2])
    }
    return { run, answers }
  }

  test('a no-change status reads each listing as a 304, and says what a full read says', async () => {
    world = await syncedWorld(dialect)
    const w = world
    const first = await listingAnswers(w, '--json', 'status')
    const second = await listingAnswers(w, '--json', 'status')
    expect(second.answers).toEqual({ schemas: 304, content: 304 })
    expect(second.run.exitCode).toBe(0)
    expect(second.run.json).toEqual(first.run.json)
    expect(second.run.json.clean).toBe(true)
    // Kept: schemas and content; never connections (secrets) or forms (entries).
    expect((await readdir(w.file('.cms-sync/listings'))).sort()).toEqual([
      'content.head.json',
      'content.json',
      'schemas.head.json',
      'schemas.json',
    ])
  })

  test('an item changed on the server is seen: the listing is read in full again', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await w.cli('status')
    await w.setContent('home', { properties: { title: 'remote' } })
    const after = await listingAnswers(w, '--json', 'status')
    expect(after.answers.content).toBe(200)
    expect(after.run.json.changes).toContainEqual(
      expect.objectContaining({ path: 'content/home.json', action: 'pull' }),
    )
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(JSON.parse(await readFile(w.file('content/home.json'), 'utf8')).properties.title).toBe('remote')
    // The pull kept the new listing: the next status is a 304 again.
    expect((await listingAnswers(w, 'status')).answers).toEqual({ schemas: 304, content: 304 })
  })

  test('a damaged kept listing is not used: the listing is read in full', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await w.cli('status')
    const kept = w.file('.cms-sync/listings/content.json')
    const text = await readFile(kept, 'utf8')
    // The same ETag, a body cut short: its sha256 no longer matches.
    await writeFile(kept, text.slice(0, text.length - 40))
    const after = await listingAnswers(w, '--json', 'status')
    expect(after.answers.content).toBe(200)
    expect(after.run.exitCode).toBe(0)
    expect(after.run.json.clean).toBe(true)
  })

  test('a kept listing is never read or written through a symbolic link', async () => {
    world = await syncedWorld(dialect)
    const w = world
    await w.cli('status')
    const outside = await mkdtemp(path.join(tmpdir(), 'cms-sync-outside-'))
    try {
      // A link in place of the kept file, to a file outside: not read, not written.
      const target = path.join(outside, 'shell-profile')
      await writeFile(target, 'export PATH=/usr/bin\n')
      await rm(w.file('.cms-sync/listings/content.json'))
      await symlink(target, w.file('.cms-sync/listings/content.json'))
      const after = await listingAnswers(w, '--json', 'status')
      expect(after.answers.content).toBe(200)
      expect(after.run.json.clean).toBe(true)
      expect(await readFile(target, 'utf8')).toBe('export PATH=/usr/bin\n')
      // A link in place of the folder: the command refuses to start (as for any link in .cms-sync/).
      await rm(w.file('.cms-sync/listings'), { recursive: true })
      await symlink(outside, w.file('.cms-sync/listings'))
      expect((await w.cli('status')).exitCode).toBe(2)
      expect(await readdir(outside)).toEqual(['shell-profile'])
    } finally {
      await rm(outside, { recursive: true, force: true })
    }
  })

  test('the media listing is kept too: a no-change status reads it as a 304', async () => {
    world = await startWorld(dialect, { resources: ['schemas', 'content', 'media'] })
    const w = world
    await mkdir(w.file('media/img'), { recursive: true })
    await writeFile(w.file('media/img/logo.txt'), 'v1')
    expect((await w.cli('sync')).exitCode).toBe(0)
    const first = await listingAnswers(w, '--json', 'status')
    const second = await listingAnswers(w, '--json', 'status')
    expect(second.answers).toEqual({ schemas: 304, content: 304, media: 304 })
    expect(second.run.json).toEqual(first.run.json)
    expect(second.run.json.clean).toBe(true)
    expect(await readdir(w.file('.cms-sync/listings'))).toContain('media.json')
  })
})
