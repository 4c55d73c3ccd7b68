// `cms-sync status` only looks: it takes no lock (it runs while `watch` holds the workspace) and
// leaves the workspace as it found it. What it may write is its own log lines (.cms-sync/logs/),
// as the header of src/cli/commands/status.ts says (no listing body is kept anywhere); every other byte, in the workspace and in .cms-sync/, stays.

import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { homePushedThenKilled } from '../helpers/state-files.js'
import { type Dialect, startWorld, type World } from '../helpers/sync-world.js'
import { watchReconciled } from '../helpers/watch.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** What status may write (see the header of src/cli/commands/status.ts). */
const MAY_WRITE = [/^\.cms-sync\/logs\//]

/** Every file of the workspace, .cms-sync/ included, with its bytes and modification time. */
async function everyFile(root: string): Promise<Map<string, { bytes: string; mtimeMs: number }>> {
  const files = new Map<string, { bytes: string; mtimeMs: number }>()
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      const rel = path.relative(root, full).split(path.sep).join('/')
      if (entry.isDirectory()) {
        files.set(`${rel}/`, { bytes: '', mtimeMs: 0 })
        await walk(full)
      } else
        files.set(rel, {
          bytes: (await readFile(full)).toString('base64'),
          mtimeMs: (await stat(full)).mtimeMs,
        })
    }
  }
  await walk(root)
  return files
}

function outsideMayWrite(files: Map<string, { bytes: string; mtimeMs: number }>) {
  return Object.fromEntries([...files].filter(([rel]) => !MAY_WRITE.some((allowed) => allowed.test(rel))))
}

/** A synced workspace of content and media, then a change on each side and one on both. */
async function drifted(dialect: Dialect): Promise<World> {
  const w = await startWorld(dialect, { resources: ['schemas', 'content', 'media'] })
  cleanups.push(() => w.close())
  await mkdir(w.file('media'), { recursive: true })
  await writeFile(w.file('media/photo.png'), 'photo-bytes')
  expect((await w.cli('sync')).exitCode).toBe(0)
  await w.editJson('content/home.json', { properties: { title: 'edited here' } })
  await w.setContent('news', { properties: { title: 'edited on the server' } })
  await w.editJson('content/shop.json', { properties: { title: 'shop here' } })
  await w.setContent('shop', { properties: { title: 'shop there' } })
  await writeFile(w.file('media/new.png'), 'new-bytes')
  return w
}

describe('status changes nothing', () => {
  test.each(['spec', 'upstream'] as const)(
    '%s: status, --json and --checksum leave every file of the workspace and of .cms-sync/ byte for byte, but the listing cache and the log',
    async (dialect) => {
      const w = await drifted(dialect)
      const before = await everyFile(w.root)
      // When status runs in each of its forms, twice (the second finds what the first kept)
      for (const args of [['status'], ['--json', 'status'], ['status', '--checksum'], ['status']]) {
        const run = await w.cli(...args)
        // Then it reports the drift (a conflict: exit 3)
        expect(run.exitCode, `${run.stdout}${run.stderr}`).toBe(3)
      }
      const json = await w.cli('--json', 'status')
      expect(json.json.changes.map((c: { path: string; action: string }) => `${c.action} ${c.path}`)).toEqual(
        expect.arrayContaining(['push content/home.json', 'pull content/news.json', 'push media/new.png']),
      )
      // and every file outside the listing cache and the log is as it was, times included
      expect(outsideMayWrite(await everyFile(w.root))).toEqual(outsideMayWrite(before))
    },
  )

  test('after a push a kill left unrecorded, status plans against the landed push and saves no state, lock or journal', async () => {
    const w = await startWorld('spec')
    cleanups.push(() => w.close())
    expect((await w.cli('sync')).exitCode).toBe(0)
    // As a kill -9 right after the server's answer leaves it.
    await homePushedThenKilled(w, 'pushed, then killed')
    await w.editJson('content/home.json', { properties: { title: 'edited again' } })
    const before = await everyFile(w.root)
    // When status runs
    const run = await w.cli('--json', 'status')
    // Then it plans against the landed push (a push, not a conflict with our own write)
    expect(run.json.changes).toMatchObject([{ path: 'content/home.json', action: 'push' }])
    // and it wrote nothing but the listing cache and the log: no state, lock, journal or file
    // (the base blob it plans with is the one the push kept before it was killed)
    const after = await everyFile(w.root)
    const written = [...after]
      .filter(([rel, file]) => !rel.endsWith('/') && before.get(rel)?.bytes !== file.bytes)
      .map(([rel]) => rel)
      .filter((rel) => !MAY_WRITE.some((allowed) => allowed.test(rel)))
    expect(written).toEqual([])
    expect([...before.keys()].filter((rel) => !after.has(rel))).toEqual([])
  })

  test('status runs while watch holds the workspace lock, and says what watch would sync', async () => {
    const w = await startWorld('spec')
    cleanups.push(() => w.close())
    expect((await w.cli('sync')).exitCode).toBe(0)
    const daemon = await watchReconciled(w, cleanups, 60)
    expect(await stat(path.join(w.root, '.cms-sync', 'lock')).then(() => true)).toBe(true)
    await w.setContent('news', { properties: { title: 'edited on the server' } })
    // When status runs beside the daemon
    const run = await w.cli('--json', 'status')
    // Then it is not refused as locked (exit 5) and reports the server's edit
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.json.changes).toMatchObject([{ path: 'content/news.json', action: 'pull' }])
    expect(daemon.stderr()).not.toMatch(/error/i)
  })
})
