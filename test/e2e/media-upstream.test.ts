// Media against what the real upstream server does (docs/media.md, shared/upstream/README.md),
// as the emulator's upstream dialect models it: a new project's first uploads answer 500 after
// storing the file and its deletes answer 404 and delete nothing (no cache folder yet), its
// first downloads race on making that folder (404 EEXIST), and the listing has no dates, so a
// byte change under the same name shows only in the bytes.

import { spawn } from 'node:child_process'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeAll, describe, expect, test } from 'vitest'
import { createMediaApi } from '../../src/remote/media.js'
import { ensureBuilt, MAIN_JS } from '../helpers/build.js'
import { startWorld, type World } from '../helpers/sync-world.js'

const ALL = ['schemas', 'content', 'media', 'forms', 'connections']

let world: World | undefined
beforeAll(ensureBuilt, 120_000)
afterEach(async () => {
  await world?.close()
  world = undefined
})

async function start(): Promise<World> {
  world = await startWorld('upstream', { resources: ALL, content: [] })
  return world
}

async function put(w: World, rel: string, bytes: string): Promise<void> {
  await mkdir(path.dirname(w.file(rel)), { recursive: true })
  await writeFile(w.file(rel), bytes)
}

async function mediaFiles(w: World): Promise<string[]> {
  const entries = await readdir(w.file('media'), { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(w.file('media'), path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort()
}

async function mediaIndex(w: World): Promise<Record<string, string>> {
  const { parse } = await import('yaml')
  return parse(await readFile(w.file('media.yaml'), 'utf8')) ?? {}
}

/** Someone else's upload straight to the server: no download, so the cache folder stays missing. */
async function rawUpload(w: World, id: string, name: string, bytes: string, folder = '/') {
  const form = new FormData()
  form.append('media', new Blob([bytes]), name)
  const P = `${w.emulator.url}/api/demo/live`
  const headers = { cookie: `token=${w.emulator.token()}` }
  await fetch(`${P}/media/${id}`, { method: 'POST', body: form, headers })
  await fetch(`${P}/media/tree/${id}`, {
    method: 'POST',
    body: JSON.stringify({ id, folder }),
    headers: { ...headers, 'content-type': 'application/json' },
  })
}

async function serverBytes(w: World, id: string): Promise<string> {
  return (await fetch(`${w.emulator.url}/media/demo/live/${id}`)).text()
}

describe('a new upstream project (no media cache folder yet)', () => {
  test('push, push, sync of a new file: one server item, exit 0 each time, no stray copy', async () => {
    const w = await start()
    await put(w, 'media/img/My Photo.png', 'PNG-photo-bytes')
    for (const command of ['push', 'push', 'sync']) {
      const run = await w.cli('--json', command)
      expect(run.exitCode, `${command}: ${run.stdout}${run.stderr}`).toBe(0)
    }
    const listed = await createMediaApi(w.server).list()
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({ name: 'my-photo.png', folder: 'img' })
    expect(await serverBytes(w, listed[0]!.id)).toBe('PNG-photo-bytes')
    expect(await mediaFiles(w)).toEqual(['img/My Photo.png'])
    expect(await mediaIndex(w)).toEqual({ 'img/My Photo.png': listed[0]!.id })
    const status = await w.cli('--json', 'status')
    expect(status.json.changes).toEqual([])
  })

  test('a kill -9 after the bytes were sent but before the answer: the next push re-uses the id', async () => {
    const w = await start()
    await put(w, 'media/img/My Photo.png', 'PNG-photo-bytes')
    // The upload reaches the server, which stores the file; the answer never comes back.
    w.proxy.hold = (method, route) =>
      method === 'POST' && /^\/api\/demo\/live\/media\/[0-9a-f]{16}$/.test(route)
    const child = spawn(process.execPath, [MAIN_JS, '-C', w.root, 'push'], {
      env: { ...process.env, ...w.env, NO_COLOR: '1' },
      stdio: 'ignore',
    })
    const exited = new Promise((resolve) => child.on('close', resolve))
    for (let waited = 0; w.proxy.held.length === 0; waited += 20) {
      if (waited > 20_000) throw new Error('the upload never reached the server')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    child.kill('SIGKILL')
    await exited
    w.proxy.hold = undefined
    const chosen = w.proxy.held[0]!.path.split('/').pop()!
    expect((await createMediaApi(w.server).list()).map((m) => m.id)).toEqual([chosen])

    const run = await w.cli('--json', 'push')
    expect(run.exitCode, run.stdout + run.stderr).toBe(0)
    expect((await createMediaApi(w.server).list()).map((m) => m.id)).toEqual([chosen])
    expect((await w.cli('--json', 'sync')).exitCode).toBe(0)
    expect((await createMediaApi(w.server).list()).map((m) => m.id)).toEqual([chosen])
    expect(await mediaFiles(w)).toEqual(['img/My Photo.png'])
    expect(await mediaIndex(w)).toEqual({ 'img/My Photo.png': chosen })
  })

  test('the first downloads race on the cache folder (404 EEXIST): retried, every file pulled', async () => {
    const w = await start()
    for (let i = 1; i <= 6; i++) await rawUpload(w, `aaaa00000000000${i}`, `photo${i}.png`, `bytes-${i}`)
    const run = await w.cli('--json', 'pull')
    expect(run.exitCode, run.stdout + run.stderr).toBe(0)
    expect(await mediaFiles(w)).toEqual([1, 2, 3, 4, 5, 6].map((i) => `photo${i}.png`))
    expect(await readFile(w.file('media/photo4.png'), 'utf8')).toBe('bytes-4')
  })

  test('a delete answered 404 ENOENT deleted nothing: the item is deleted after all', async () => {
    const w = await start()
    await rawUpload(w, 'aaaa000000000001', 'photo.png', 'bytes')
    await createMediaApi(w.server).remove('aaaa000000000001')
    expect(await createMediaApi(w.server).list()).toEqual([])
  })
})
describe('a byte change on the server, invisible to the listing', () => {
  async function synced(): Promise<{ w: World; id: string }> {
    const w = await start()
    await put(w, 'media/photo.png', 'base-bytes')
    expect((await w.cli('--json', 'sync')).exitCode).toBe(0)
    const id = (await mediaIndex(w))['photo.png']!
    // Someone replaces the bytes under the same name: the listing looks the same as before.
    await rawUpload(w, id, 'photo.png', 'server-bytes')
    return { w, id }
  }

  test('a local edit is not pushed over it: conflict, both versions kept', async () => {
    const { w, id } = await synced()
    await put(w, 'media/photo.png', 'local-bytes')
    const run = await w.cli('--json', 'push')
    expect(run.exitCode).toBe(3)
    expect(run.json.conflicts).toMatchObject([{ path: 'media/photo.png' }])
    expect(await serverBytes(w, id)).toBe('server-bytes')
    expect(await readFile(w.file('media/photo.png'), 'utf8')).toBe('local-bytes')
    expect(await readFile(w.file('.cms-sync/conflicts/media/photo.png.remote'), 'utf8')).toBe('server-bytes')
  })

  test('a local delete does not delete it: conflict', async () => {
    const { w, id } = await synced()
    await rm(w.file('media/photo.png'))
    const run = await w.cli('--json', 'push', '--allow-deletes')
    expect(run.exitCode).toBe(3)
    expect(run.json.conflicts).toMatchObject([{ path: 'media/photo.png' }])
    expect(await serverBytes(w, id)).toBe('server-bytes')
  })

  test('a conflict --checksum found stays until resolved: a plain push does not overwrite it', async () => {
    const { w, id } = await synced()
    await put(w, 'media/photo.png', 'local-bytes')
    // A plain status cannot see the server's change; --checksum finds it and records it.
    expect((await w.cli('--json', 'status')).json.changes).toMatchObject([
      { path: 'media/photo.png', action: 'push' },
    ])
    const first = await w.cli('--json', 'sync', '--checksum')
    expect(first.exitCode).toBe(3)
    expect(first.json.conflicts).toMatchObject([{ path: 'media/photo.png' }])
    for (const command of ['push', 'sync', 'push']) {
      const run = await w.cli('--json', command)
      expect(run.exitCode, command).toBe(3)
      expect(run.json.conflicts).toMatchObject([{ path: 'media/photo.png' }])
    }
    expect((await w.cli('--json', 'status')).json.changes).toMatchObject([
      { path: 'media/photo.png', action: 'conflict' },
    ])
    expect(await serverBytes(w, id)).toBe('server-bytes')
    // Resolved by keeping the local file: pushed, and the conflict is gone.
    const resolved = await w.cli('--json', 'resolve', 'media/photo.png', '--keep', 'local')
    expect(resolved.exitCode, resolved.stdout + resolved.stderr).toBe(0)
    expect(await serverBytes(w, id)).toBe('local-bytes')
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])
  })
})
