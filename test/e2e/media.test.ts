// Media end to end, both dialects: bytes under media/ in folders that mirror the tree,
// media.yaml mapping every path to its id, renames and moves as the same id, names the server
// rewrites without an echo, deletes, remote changes, a conflict keeping both versions, and a
// fresh clone that uploads nothing.

import { cp, mkdir, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { createMediaApi, type MediaApi } from '../../src/remote/media.js'
import { startWorld, type World } from '../helpers/sync-world.js'

const ALL = ['schemas', 'content', 'media', 'forms', 'connections']

async function mediaIndex(w: World): Promise<Record<string, string>> {
  const { parse } = await import('yaml')
  return parse(await readFile(w.file('media.yaml'), 'utf8')) ?? {}
}

async function put(w: World, rel: string, text: string): Promise<void> {
  await mkdir(path.dirname(w.file(rel)), { recursive: true })
  await writeFile(w.file(rel), text)
}

/** Someone else uploads through the API (a temp file outside the workspace). */
async function uploadRemote(w: World, api: MediaApi, name: string, folder: string, text: string) {
  const file = path.join(w.root, '..', `upload-${Date.now()}-${Math.random()}`)
  await writeFile(file, text)
  const { id } = await api.upload({ path: file, size: Buffer.byteLength(text), name })
  await api.move(id, folder)
  return id
}

async function serverBytes(w: World, id: string): Promise<string> {
  const res = await fetch(`${w.emulator.url}/media/demo/live/${id}`)
  return res.text()
}

describe.each(['spec', 'upstream'] as const)('media (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  async function start(): Promise<{ w: World; api: MediaApi }> {
    world = await startWorld(dialect, { resources: ALL, content: [] })
    return { w: world, api: createMediaApi(world.server) }
  }

  async function sync(w: World, ...args: string[]) {
    const run = await w.cli('--json', 'sync', ...args)
    expect(run.exitCode, run.stderr + JSON.stringify(run.json)).toBe(0)
    return run
  }

  async function clean(w: World) {
    const status = await w.cli('--json', 'status')
    expect(status.json.changes).toEqual([])
  }

  test('server media are pulled into folders that mirror the tree, with media.yaml; no echo after', async () => {
    const { w, api } = await start()
    const hero = await uploadRemote(w, api, 'hero.png', '/images/home/', 'PNG-bytes')
    const doc = await uploadRemote(w, api, 'guide.v1.2.txt', '/docs/', 'text')
    const root = await uploadRemote(w, api, 'logo.svg', '/', '<svg/>')
    await sync(w)
    expect(await readFile(w.file('media/images/home/hero.png'), 'utf8')).toBe('PNG-bytes')
    expect(await readFile(w.file('media/logo.svg'), 'utf8')).toBe('<svg/>')
    const index = await mediaIndex(w)
    expect(index['images/home/hero.png']).toBe(hero)
    expect(index['logo.svg']).toBe(root)
    expect(Object.values(index)).toContain(doc)
    await clean(w)
    // A second sync sends no request but the listings
    w.proxy.seen.length = 0
    const again = await sync(w)
    expect(again.json.applied).toEqual([])
    expect(w.proxy.seen.filter((r) => !r.startsWith('GET /api/demo/live/'))).toEqual([])
  })

  test('new local files with spaces, unicode and dots are uploaded once; rewritten names do not echo', async () => {
    const { w } = await start()
    await put(w, 'media/Press Kit/Übersicht 2024.v2.PDF', 'pdf-bytes')
    await put(w, 'media/a b/ç.txt', 'c')
    await put(w, 'media/plain.txt', 'plain')
    await mkdir(w.file('media/empty folder'), { recursive: true })
    const first = await sync(w)
    expect(first.json.applied.filter((a: { kind: string }) => a.kind === 'media')).toHaveLength(3)
    const index = await mediaIndex(w)
    const id = index['Press Kit/Übersicht 2024.v2.PDF']!
    expect(id).toMatch(/^[0-9a-f]{16}$/)
    const stored = (await createMediaApi(w.server).get(id))!
    expect(stored.folder).toBe('Press Kit')
    expect(await serverBytes(w, id)).toBe('pdf-bytes')
    if (dialect === 'upstream') expect(stored.name).not.toBe('Übersicht 2024.v2.PDF') // rewritten by the server
    // The local names stay, nothing is renamed back and forth, nothing uploaded again
    expect(await readFile(w.file('media/Press Kit/Übersicht 2024.v2.PDF'), 'utf8')).toBe('pdf-bytes')
    await clean(w)
    w.proxy.seen.length = 0
    expect((await sync(w)).json.applied).toEqual([])
    expect(w.proxy.seen.some((r) => r.startsWith('POST'))).toBe(false)
  })

  test('a local rename and a move keep the id: rename and tree move, never delete and upload', async () => {
    const { w, api } = await start()
    const id = await uploadRemote(w, api, 'photo.png', '/images/', 'photo')
    await sync(w)
    await mkdir(w.file('media/archive/2024'), { recursive: true })
    const { rename } = await import('node:fs/promises')
    await rename(w.file('media/images/photo.png'), w.file('media/archive/2024/team photo.png'))
    const status = await w.cli('--json', 'status')
    expect(status.json.changes).toMatchObject([
      {
        kind: 'media',
        id,
        path: 'media/archive/2024/team photo.png',
        from: 'media/images/photo.png',
        action: 'push',
      },
    ])
    w.proxy.seen.length = 0
    await sync(w)
    expect(w.proxy.seen).not.toContain(`POST /api/demo/live/media/${id}`)
    expect(w.proxy.seen.some((r) => r.startsWith('DELETE'))).toBe(false)
    expect(await api.get(id)).toMatchObject({ name: 'team photo.png', folder: 'archive/2024' })
    expect((await mediaIndex(w))['archive/2024/team photo.png']).toBe(id)
    // The folder the user emptied is theirs: an empty folder is not mirrored either way
    expect(await w.exists('media/images')).toBe(true)
    await clean(w)
  })

  test('a remote rename and move move the local file without downloading it again', async () => {
    const { w, api } = await start()
    const id = await uploadRemote(w, api, 'a.txt', '/one/', 'AAA')
    await sync(w)
    await api.rename(id, 'b.txt')
    await api.move(id, '/two/three/')
    const run = await sync(w)
    expect(run.json.applied).toMatchObject([
      { kind: 'media', id, path: 'media/two/three/b.txt', action: 'pull' },
    ])
    expect(await readFile(w.file('media/two/three/b.txt'), 'utf8')).toBe('AAA')
    expect(await w.exists('media/one/a.txt')).toBe(false)
    expect((await mediaIndex(w))['two/three/b.txt']).toBe(id)
    await clean(w)
  })

  test('changed bytes go to the same id both ways; deletes go both ways', async () => {
    const { w, api } = await start()
    const a = await uploadRemote(w, api, 'a.txt', '/', 'one')
    const b = await uploadRemote(w, api, 'b.txt', '/', 'two')
    const c = await uploadRemote(w, api, 'c.txt', '/', 'three')
    await sync(w)
    await writeFile(w.file('media/a.txt'), 'one, edited')
    await sync(w)
    expect(await serverBytes(w, a)).toBe('one, edited')
    expect((await mediaIndex(w))['a.txt']).toBe(a)
    // A change on the server: spec tells by updateDate; upstream has none, so --checksum
    await uploadRemote(w, api, 'b.txt', '/', 'x') // another item, so the listing moves on
    const file = path.join(w.root, '..', 'b2')
    await writeFile(file, 'two, edited')
    await api.upload({ path: file, size: 11, name: 'b.txt' }, b)
    await sync(w, ...(dialect === 'upstream' ? ['--checksum'] : []))
    expect(await readFile(w.file('media/b.txt'), 'utf8')).toBe('two, edited')
    await w.remove('media/c.txt')
    await sync(w)
    expect(await api.get(c)).toBeUndefined()
    await api.remove(a)
    await sync(w)
    expect(await w.exists('media/a.txt')).toBe(false)
    expect(Object.values(await mediaIndex(w))).not.toContain(a)
  })

  test('bytes changed on both sides: a conflict, both versions kept (exit 3)', async () => {
    const { w, api } = await start()
    const id = await uploadRemote(w, api, 'both.txt', '/', 'base')
    await sync(w)
    await writeFile(w.file('media/both.txt'), 'local edit')
    const file = path.join(w.root, '..', 'remote-edit')
    await writeFile(file, 'remote edit')
    await api.upload({ path: file, size: 11, name: 'both.txt' }, id)
    const run = await w.cli('--json', 'sync', ...(dialect === 'upstream' ? ['--checksum'] : []))
    expect(run.exitCode).toBe(3)
    expect(run.json.conflicts).toMatchObject([{ kind: 'media', id, path: 'media/both.txt' }])
    expect(await readFile(w.file('media/both.txt'), 'utf8')).toBe('local edit')
    expect(await readFile(w.file('.cms-sync/conflicts/media/both.txt.remote'), 'utf8')).toBe('remote edit')
    expect(await serverBytes(w, id)).toBe('remote edit')
    // Settled for local: the server gets the file, its version is kept in trash
    const settled = await w.cli(
      '--json',
      'sync',
      '--prefer',
      'local',
      ...(dialect === 'upstream' ? ['--checksum'] : []),
    )
    expect(settled.exitCode, JSON.stringify(settled.json)).toBe(0)
    expect(await serverBytes(w, id)).toBe('local edit')
  })

  test('a token refused during the uploads stops them: none starts after the refusal', async () => {
    const { w, api } = await start()
    for (let i = 0; i < 12; i++) await put(w, `media/file-${i}.txt`, `bytes ${i}`)
    // The first upload is refused; the rest would go through, had the run gone on.
    const upload = (method: string, route: string) =>
      method === 'POST' && /\/media\/[^/]+$/.test(route) && !route.endsWith('/new')
    let refused = false
    w.proxy.override = (method, route) => {
      if (!upload(method, route) || refused) return undefined
      refused = true
      return { status: 401, body: '{"message":"token expired"}' }
    }
    const push = await w.cli('push')
    expect(push.exitCode, push.stderr).toBe(2)
    // What was under way when the refusal came may finish; nothing may start after the run
    // said it stopped (the transfers beside the refused one once went on to the last file).
    w.proxy.override = undefined
    const uploads = () => w.proxy.seen.filter((r) => upload(r.split(' ')[0]!, r.split(' ')[1]!))
    const first = uploads().length
    expect(first).toBeLessThanOrEqual(4) // rateLimit.concurrency
    // The next run uploads the rest, each once. Over both runs every file went up once, the
    // refused one twice: no transfer of the first run went on after it, even while the next ran.
    await sync(w)
    expect(Object.keys(await mediaIndex(w))).toHaveLength(12)
    expect(await api.list()).toHaveLength(12)
    expect(uploads()).toHaveLength(13)
    await clean(w)
  })

  test('a fresh clone with media.yaml knows every id and uploads nothing', async () => {
    const { w, api } = await start()
    await uploadRemote(w, api, 'Keep Me.png', '/pics/', 'keep')
    await put(w, 'media/mine/Ünï cødé.txt', 'mine')
    await sync(w)
    const clone = path.join(w.root, '..', 'clone')
    await cp(w.root, clone, { recursive: true })
    await rm(path.join(clone, '.cms-sync'), { recursive: true, force: true })
    w.proxy.seen.length = 0
    const run = await w.cliIn(clone, '--json', 'sync')
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.json.applied).toEqual([])
    expect(w.proxy.seen.some((r) => r.startsWith('POST'))).toBe(false)
    const status = await w.cliIn(clone, '--json', 'status')
    expect(status.json.changes).toEqual([])
  })

  test('media.yaml hand edits are validated with a clear message, and nothing changes', async () => {
    const { w } = await start()
    await writeFile(w.file('media.yaml'), 'a.png: 12345\nb.png: x\n')
    const run = await w.cli('sync')
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain('media.yaml: "a.png": expected a media id string, got 12345 (quote it')
    await writeFile(w.file('media.yaml'), 'a.png: x\n../b.png: y\n')
    expect((await w.cli('sync')).stderr).toContain('media.yaml: "../b.png"')
  })

  test.runIf(dialect === 'spec')('a file over the server limit is refused with a clear message', async () => {
    const { w } = await start()
    await mkdir(w.file('media'), { recursive: true })
    await writeFile(w.file('media/huge.bin'), '')
    await truncate(w.file('media/huge.bin'), 38 * 1024 * 1024)
    await put(w, 'media/small.txt', 'ok')
    const run = await w.cli('--json', 'push')
    expect(run.exitCode).toBe(1)
    expect(run.json.failed).toMatchObject([{ path: 'media/huge.bin' }])
    expect(run.json.failed[0].error).toContain('files up to about 37 MB')
    expect(run.json.applied).toMatchObject([{ path: 'media/small.txt' }])
  })
})
