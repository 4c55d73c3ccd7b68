// A restart after a kill -9 behaves as one after a clean stop (issue 14 item 10), in-process:
// the workspace is put back as a kill would leave it (the state and lock of before the run, the
// push journal as it was on disk while the push was on its way), then the next run goes on.
// test/reliability/disk-and-process.test.ts kills real processes for the same two cases.

import { existsSync } from 'node:fs'
import { link, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { createMediaApi } from '../../src/remote/media.js'
import { copyRecord, copyState, homePushedThenKilled, putState } from '../helpers/state-files.js'
import { startWorld, syncedWorld, type World } from '../helpers/sync-world.js'

describe.each(['spec', 'upstream'] as const)('a restart after a kill (%s dialect)', (dialect) => {
  let world: World | undefined
  afterEach(async () => {
    await world?.close()
    world = undefined
  })
  const keep = (w: World): World => {
    world = w
    return w
  }

  test('a push the server got but the state never saved is the base: the next edit of the field is no conflict', async () => {
    const w = keep(await syncedWorld(dialect))
    // As a kill -9 right after the server's answer leaves it.
    const saved = await homePushedThenKilled(w, 'pushed, then killed')
    expect(saved.journal).toMatch(/content\/home\.json/)
    await w.editJson('content/home.json', { properties: { title: 'edited again' } })
    // status sees a push to make, and writes nothing (it holds no lock).
    const status = await w.cli('--json', 'status')
    expect(status.json.changes).toMatchObject([{ path: 'content/home.json', action: 'push' }])
    expect(await copyState(w.root)).toEqual(saved.state)
    const sync = await w.cli('--json', 'sync')
    expect(sync.json.conflicts, sync.stderr).toEqual([])
    expect(sync.exitCode).toBe(0)
    expect((await w.server.get('content', 'home'))?.properties).toMatchObject({ title: 'edited again' })
    expect(existsSync(w.file('.cms-sync/pushes.jsonl'))).toBe(false)
  })

  test('a new media file the server got but the state and media.yaml never recorded is synced, not a conflict', async () => {
    const w = keep(await startWorld(dialect, { resources: ['schemas', 'content', 'media'], content: [] }))
    expect((await w.cli('sync')).exitCode).toBe(0)
    const saved = await copyRecord(w)
    await mkdir(w.file('media/docs'), { recursive: true })
    await writeFile(w.file('media/docs/report.txt'), 'the report')
    expect((await w.cli('push')).exitCode).toBe(0)
    const api = createMediaApi(w.server)
    expect((await api.list()).map((m) => m.name)).toEqual(['report.txt'])
    // As a kill -9 right after the upload's answer leaves it: the id chosen is on disk (it is
    // written before a byte goes), the state, the lock and media.yaml are as before the push.
    await putState(w.root, saved.state)
    await writeFile(w.file('cms-sync.lock'), saved.lock)
    await rm(w.file('media.yaml'), { force: true })

    const sync = await w.cli('--json', 'sync')
    expect(sync.json.conflicts, sync.stderr).toEqual([])
    expect(sync.exitCode, sync.stderr).toBe(0)
    // One file is one server item: nothing uploaded a second time.
    expect((await api.list()).map((m) => m.name)).toEqual(['report.txt'])
    expect(await readFile(w.file('media/docs/report.txt'), 'utf8')).toBe('the report')
    expect((await w.cli('--json', 'status')).json.clean).toBe(true)
  })

  test('temp files a killed run left go at the next locked run; status leaves them and reports nothing', async () => {
    const w = keep(await syncedWorld(dialect))
    await mkdir(w.file('.cms-sync/tmp'), { recursive: true })
    await writeFile(w.file('.cms-sync/tmp/write-999999999-1'), '{"torn":')
    await mkdir(w.file('.cms-sync/tmp/media-999999999-1'), { recursive: true })
    await writeFile(w.file('content/home.json.1234567890'), '{"torn":')
    await writeFile(w.file('cms-sync.lock.123456'), 'torn')
    const status = await w.cli('--json', 'status')
    expect(status.exitCode, status.stderr).toBe(0)
    expect(status.json.clean).toBe(true)
    expect(existsSync(w.file('content/home.json.1234567890'))).toBe(true)
    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(await readdir(w.file('.cms-sync/tmp'))).toEqual([])
    expect(existsSync(w.file('content/home.json.1234567890'))).toBe(false)
    expect(existsSync(w.file('cms-sync.lock.123456'))).toBe(false)
    // Moved aside, not deleted: only their names say they are ours.
    const trash = (await readdir(w.file('.cms-sync/trash'))).find((n) => n.endsWith('-left-temp-files'))
    expect(await readFile(w.file(`.cms-sync/trash/${trash}/content/home.json.1234567890`), 'utf8')).toBe(
      '{"torn":',
    )
    expect(await readFile(w.file(`.cms-sync/trash/${trash}/cms-sync.lock.123456`), 'utf8')).toBe('torn')
  })

  test('a kill while the lock is written, after the state was saved, leaves the old lock whole: the next run plans no conflict and writes it again', async () => {
    const w = keep(await syncedWorld(dialect))
    // The lock and the note of its stat as they stand before the push: a kill -9 while the push
    // writes its lock (a copy in .cms-sync/tmp/, not yet renamed) leaves them so.
    const kept = path.join(w.root, '.cms-sync', 'lock-before')
    await link(w.file('cms-sync.lock'), kept)
    const seen = await readFile(w.file('.cms-sync/state/lock-seen.json'))
    await w.editJson('content/home.json', { properties: { title: 'pushed, lock not written' } })
    expect((await w.cli('push', 'content/home.json')).exitCode).toBe(0)
    const written = await readFile(w.file('cms-sync.lock'), 'utf8')
    await rename(kept, w.file('cms-sync.lock'))
    await writeFile(w.file('.cms-sync/state/lock-seen.json'), seen)
    await writeFile(w.file('.cms-sync/tmp/write-999999999-7'), written.slice(0, 100))
    expect(await readFile(w.file('cms-sync.lock'), 'utf8')).not.toBe(written)

    const status = await w.cli('--json', 'status')
    expect(status.json.clean, status.stdout).toBe(true)
    const sync = await w.cli('--json', 'sync')
    expect(sync.exitCode, sync.stderr).toBe(0)
    expect(sync.json.conflicts).toEqual([])
    expect(await readFile(w.file('cms-sync.lock'), 'utf8')).toBe(written)
    expect(await readdir(w.file('.cms-sync/tmp'))).toEqual([])
    expect((await w.server.get('content', 'home'))?.properties).toMatchObject({
      title: 'pushed, lock not written',
    })
  })

  test('a run of named files clears the temp files a killed run recorded, and reads no synced folder for others', async () => {
    const w = keep(await syncedWorld(dialect))
    // As a write across file systems leaves it when killed (test/engine/atomic-write.test.ts):
    // its temp file beside the target, and in .cms-sync/tmp/ the record of its name made before it.
    await mkdir(w.file('.cms-sync/tmp'), { recursive: true })
    await writeFile(w.file('content/home.json.1234567891'), '{"torn":')
    await writeFile(w.file('.cms-sync/tmp/sibling-999999999-1'), w.file('content/home.json.1234567891'))
    // A record naming a file outside the workspace (not ours to move) leaves that file alone.
    const outside = await mkdtemp(path.join(tmpdir(), 'cms-sync-outside-'))
    await writeFile(path.join(outside, 'notes.json.1234567892'), 'not ours')
    await writeFile(w.file('.cms-sync/tmp/sibling-999999999-2'), path.join(outside, 'notes.json.1234567892'))
    // One no record names (an older version's): left to the next run that reads the whole folder.
    await writeFile(w.file('content/home.json.1234567890'), '{"older":')
    await w.editJson('content/home.json', { properties: { title: 'edited' } })

    const push = await w.cli('push', 'content/home.json')
    expect(push.exitCode, push.stderr).toBe(0)
    expect((await w.server.get('content', 'home'))?.properties).toMatchObject({ title: 'edited' })
    expect(existsSync(w.file('content/home.json.1234567891'))).toBe(false)
    expect(await readdir(w.file('.cms-sync/tmp'))).toEqual([])
    const trash = (await readdir(w.file('.cms-sync/trash'))).find((n) => n.endsWith('-left-temp-files'))
    expect(await readFile(w.file(`.cms-sync/trash/${trash}/content/home.json.1234567891`), 'utf8')).toBe(
      '{"torn":',
    )
    expect(await readFile(path.join(outside, 'notes.json.1234567892'), 'utf8')).toBe('not ours')
    await rm(outside, { recursive: true, force: true })
    expect(existsSync(w.file('content/home.json.1234567890'))).toBe(true)

    expect((await w.cli('pull')).exitCode).toBe(0)
    expect(existsSync(w.file('content/home.json.1234567890'))).toBe(false)
  })
})
