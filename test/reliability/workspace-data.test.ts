// Attacks on the workspace's data (docs/reliability.md "Attacks on the workspace: data, disk and
// process"), in-process against the emulator, both dialects: a listing that shrank by exactly
// half or by many items, a form deleted with its entries, tracked files replaced by a FIFO or a
// folder, a form entry arriving between an export and its clear, an item nested 5,000 levels
// deep on either side, a 500 on a listing. Each asserts what the user checks (exit code, message,
// files, server) and that nothing outside the workspace changed: a sentinel tree beside it is
// checksummed before and after.

import { execFileSync } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { names } from '../../src/emulator/store.js'
import { contentOf, startWorld, type World } from '../helpers/sync-world.js'
import { bytesUnder, filesUnder, report, sentinelAround } from './support.js'

const FORM = {
  id: 'contact',
  title: 'Contact',
  allowedOrigin: '',
  redirect: '',
  appendRedirect: false,
  inputs: { name: { type: 'text', required: true }, message: { type: 'text' } },
}

const ENTRY = { name: 'Ann', message: 'call me back', time: '2026-11-20T10:00:00.000Z' }
const LATE_ENTRY = { name: 'Bob', message: 'arrived during the clear', time: '2026-11-20T10:00:05.000Z' }

const sentinel = (w: World) => sentinelAround(w.root)

/** Appends an entry to a form straight in the emulator's store (as a public submission would). */
function addEntry(w: World, formId: string, entry: Record<string, unknown>): void {
  const collection = names.env('demo', 'live', 'forms')
  const form = w.emulator.store.get<Record<string, unknown>>(collection, formId)!
  const entries = Array.isArray(form.entries) ? form.entries : []
  w.emulator.store.put(collection, formId, { ...form, entries: [...entries, entry] })
}

function entriesOf(w: World, formId: string): unknown[] {
  const form = w.emulator.store.get<Record<string, unknown>>(names.env('demo', 'live', 'forms'), formId)
  return Array.isArray(form?.entries) ? form.entries : []
}

/** A JSON value nested `depth` levels deep, as text (never built as an object here). */
function nestedText(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
}

describe.each(['spec', 'upstream'] as const)('attacks on the workspace data (%s dialect)', (dialect) => {
  let world: World | undefined
  afterEach(async () => {
    await world?.close()
    world = undefined
  })
  /** The world the test runs in, closed after it. */
  const keep = (w: World): World => {
    world = w
    return w
  }

  test('item 7: a listing that shrank by half, or by many, deletes nothing; exactly half deleted locally stops too', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `page-${i}`)
    const w = keep(await startWorld(dialect, { content: ids }))
    const outside = await sentinel(w)
    expect((await w.cli('sync')).exitCode).toBe(0)
    const before = {
      outside: await outside(),
      files: await filesUnder(w.root),
      server: await w.serverState(),
    }
    const unchanged = async (what: string) => {
      expect(await outside(), what).toEqual(before.outside)
      expect(await filesUnder(w.root), what).toEqual(before.files)
      expect(await w.serverState(), what).toEqual(before.server)
    }
    // The content listing comes back with exactly half the items.
    const all = await w.server.list('content')
    w.proxy.override = (method, route) =>
      method === 'GET' && /\/content$/.test(route)
        ? { status: 200, body: JSON.stringify(all.slice(0, 5)) }
        : undefined
    for (const command of ['sync', 'pull']) {
      const run = await w.cli(command)
      expect(run.exitCode, `${command}: ${run.stderr}`).toBe(4)
      expect(run.stderr).toMatch(/safety stop: this run would delete 5 of 10 content items/)
      await unchanged(`half a listing (${command})`)
    }
    w.proxy.override = undefined
    // Exactly half the files deleted locally (a bad checkout).
    const saved = new Map<string, string>()
    for (const id of ids.slice(0, 5)) {
      saved.set(id, await readFile(w.file(`content/${id}.json`), 'utf8'))
      await w.remove(`content/${id}.json`)
    }
    const push = await w.cli('push')
    expect(push.exitCode, push.stderr).toBe(4)
    expect(await w.serverState()).toEqual(before.server)
    for (const [id, text] of saved) await writeFile(w.file(`content/${id}.json`), text)
    await unchanged('half the files deleted locally')
    // A single deletion is an edit, not a stop.
    await w.remove('content/page-9.json')
    const one = await w.cli('push')
    expect(one.exitCode, one.stderr).toBe(0)
    expect(await w.server.get('content', 'page-9')).toBeUndefined()
    expect(await outside()).toEqual(before.outside)
    report(`attacks/shrunk-listing/${dialect}`, { listed: 5, of: 10, exit: 4, changed: 0 })
  })

  test('item 7: the absolute count: a listing that lost 30 of 100 items deletes nothing; a fresh clone never deletes', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `item-${String(i).padStart(3, '0')}`)
    const w = keep(await startWorld(dialect, { content: ids }))
    const outside = await sentinel(w)
    expect((await w.cli('sync')).exitCode).toBe(0)
    const before = { outside: await outside(), files: await filesUnder(w.root) }
    const all = await w.server.list('content')
    w.proxy.override = (method, route) =>
      method === 'GET' && /\/content$/.test(route)
        ? { status: 200, body: JSON.stringify(all.slice(30)) }
        : undefined
    const run = await w.cli('pull')
    expect(run.exitCode, run.stderr).toBe(4)
    expect(run.stderr).toMatch(/delete 30 of 100 content items/)
    expect(await filesUnder(w.root)).toEqual(before.files)
    // --allow-deletes lifts it, as the message says.
    const allowed = await w.cli('pull', '--allow-deletes')
    expect(allowed.exitCode, allowed.stderr).toBe(0)
    expect(await w.exists('content/item-000.json')).toBe(false)
    w.proxy.override = undefined
    // A workspace without any base (no .cms-sync/, no cms-sync.lock) whose server lost items:
    // nothing is deleted anywhere. (With the committed lock a clone has a base, and syncs three-way.)
    await rm(w.file('.cms-sync'), { recursive: true })
    await rm(w.file('cms-sync.lock'), { force: true })
    for (const id of ids.slice(30, 40)) await w.server.remove('content', id)
    const files = await filesUnder(w.root)
    const fresh = await w.cli('--json', 'sync', '--prefer', 'local')
    expect(fresh.exitCode, fresh.stderr).toBe(0)
    expect(fresh.json.applied.filter((a: { action: string }) => a.action.startsWith('delete'))).toEqual([])
    for (const rel of files.keys()) expect(await w.exists(rel), rel).toBe(true)
    expect(await outside()).toEqual(before.outside)
    report(`attacks/delete-count/${dialect}`, { listed: 70, of: 100, exit: 4, freshCloneDeletes: 0 })
  })

  test('item 8: deleting a form file never deletes its entries unseen: the guard asks, and they go to trash first', async () => {
    const w = keep(await startWorld(dialect, { resources: ['schemas', 'content', 'forms'] }))
    await w.server.put('form', 'contact', FORM)
    await w.server.put('form', 'empty', { ...FORM, id: 'empty', title: 'Empty' })
    const outside = await sentinel(w)
    expect((await w.cli('sync')).exitCode).toBe(0)
    addEntry(w, 'contact', ENTRY)
    const before = await outside()
    await w.remove('forms/contact.json')
    const stop = await w.cli('push')
    expect(stop.exitCode, stop.stderr).toBe(4)
    expect(stop.stderr).toMatch(/forms\/contact\.json.*1 entr/)
    expect(await w.server.get('form', 'contact')).toBeDefined()
    expect(entriesOf(w, 'contact')).toEqual([ENTRY])
    // A form without entries is deleted like any item; one with entries only when allowed.
    await w.remove('forms/empty.json')
    const allowed = await w.cli('--json', 'push', '--allow-deletes')
    expect(allowed.exitCode, allowed.stderr).toBe(0)
    expect(await w.server.get('form', 'contact')).toBeUndefined()
    expect(await w.server.get('form', 'empty')).toBeUndefined()
    const trash = [...(await bytesUnder(w.file('.cms-sync/trash')))]
    const kept = trash.filter(([rel]) => rel.endsWith('forms/contact.entries.json'))
    expect(kept.map(([rel]) => rel)).toHaveLength(1)
    expect(JSON.parse(kept[0]![1].toString('utf8'))).toEqual([ENTRY])
    expect(await outside()).toEqual(before)
    report(`attacks/form-delete/${dialect}`, { entriesKept: 1, stoppedWithout: true })
  })

  test('item 9: a tracked file replaced by a FIFO or a folder is "not synced" and deletes nothing', async () => {
    const w = keep(await startWorld(dialect))
    const outside = await sentinel(w)
    expect((await w.cli('sync')).exitCode).toBe(0)
    const before = { outside: await outside(), server: await w.serverState() }
    const home = await readFile(w.file('content/home.json'), 'utf8')
    const news = await readFile(w.file('content/news.json'), 'utf8')
    await w.remove('content/home.json')
    execFileSync('mkfifo', [w.file('content/home.json')])
    await w.remove('content/news.json')
    await mkdir(w.file('content/news.json'))
    // The server changed one of them meanwhile: not pulled over the FIFO either.
    await w.setContent('home', { properties: { title: 'edited on the server' } })
    const server = await w.serverState()
    for (const command of ['push', 'sync', 'pull']) {
      const run = await w.cli('--json', command)
      expect(run.exitCode, `${command}: ${run.stderr}${run.stdout}`).toBe(1)
      const failed = run.json.failed.map((f: { path: string; error: string }) => `${f.path}: ${f.error}`)
      expect(failed.join('\n')).toMatch(/content\/home\.json: .*not a regular file.*not synced/)
      expect(failed.join('\n')).toMatch(/content\/news\.json: .*not a regular file.*not synced/)
      expect(run.json.applied).toEqual([])
      expect(await w.serverState(), command).toEqual(server)
      expect((await stat(w.file('content/home.json'))).isFIFO()).toBe(true)
      expect((await stat(w.file('content/news.json'))).isDirectory()).toBe(true)
    }
    const status = await w.cli('--json', 'status')
    expect(status.json.changes.filter((c: { action: string }) => c.action.startsWith('delete'))).toEqual([])
    // Put back, the files sync as before: the server edit comes down, nothing was lost.
    await rm(w.file('content/home.json'))
    await rm(w.file('content/news.json'), { recursive: true })
    await writeFile(w.file('content/home.json'), home)
    await writeFile(w.file('content/news.json'), news)
    const after = await w.cli('sync')
    expect(after.exitCode, after.stderr).toBe(0)
    expect((await w.readJson('content/home.json')).properties).toMatchObject({
      title: 'edited on the server',
    })
    expect(Object.keys((await w.serverState()).content as object)).toEqual(
      Object.keys(before.server.content as object),
    )
    expect(await outside()).toEqual(before.outside)
    report(`attacks/fifo-and-folder/${dialect}`, { replaced: 2, deletedOnServer: 0, pulledOver: 0 })
  })

  test('item 12: entries --clear --yes never destroys an entry that arrives after the export', async () => {
    const w = keep(await startWorld(dialect, { resources: ['schemas', 'content', 'forms'] }))
    await w.server.put('form', 'contact', FORM)
    addEntry(w, 'contact', ENTRY)
    const outside = await sentinel(w)
    const before = await outside()
    // The submission lands right after the export has read the entries (its second read).
    let reads = 0
    w.proxy.override = (_method, route) => {
      if (/\/forms\/(clear\/)?contact(\/entries)?$/.test(route) && ++reads === 3)
        addEntry(w, 'contact', LATE_ENTRY)
      return undefined
    }
    const run = await w.cli('entries', 'contact', '--clear', '--yes', '-o', 'export.json')
    w.proxy.override = undefined
    expect(run.exitCode, run.stderr).toBe(0)
    expect(JSON.parse(await readFile(w.file('export.json'), 'utf8'))).toEqual([ENTRY])
    // The exported entry is cleared; the late one is still on the server.
    expect(entriesOf(w, 'contact')).toEqual([LATE_ENTRY])
    expect(run.stderr).toMatch(/cleared 1 entry.*kept 1 that arrived after the export/)
    expect(await outside()).toEqual(before)
    report(`attacks/entries-clear/${dialect}`, { exported: 1, arrivedDuring: 1, lost: 0 })
  })

  test('item 16: an item nested 5,000 levels deep fails alone, on either side, and the rest of the run goes on', async () => {
    const w = keep(await startWorld(dialect))
    const outside = await sentinel(w)
    expect((await w.cli('sync')).exitCode).toBe(0)
    const before = await outside()
    // On the server: a content item whose properties nest 5,000 levels (served as text: even
    // JSON.stringify overflows on it).
    const home = await w.server.get('content', 'home')
    const deepText = JSON.stringify({ ...home, id: 'deep', properties: 0 }).replace(
      '"properties":0',
      `"properties":${nestedText(5000)}`,
    )
    await w.setContent('news', { properties: { title: 'news edited on the server' } })
    const newsListed = JSON.stringify(await w.server.list('content'))
    w.proxy.override = (method, route) => {
      if (method !== 'GET') return undefined
      if (/\/content$/.test(route)) return { status: 200, body: `${newsListed.slice(0, -1)},${deepText}]` }
      if (/\/content\/deep$/.test(route)) return { status: 200, body: deepText }
      return undefined
    }
    const pull = await w.cli('--json', 'pull')
    w.proxy.override = undefined
    expect(pull.exitCode, pull.stderr).toBe(1)
    expect(pull.stderr).not.toMatch(/internal error|RangeError/)
    expect(JSON.stringify(pull.json.failed)).toMatch(/deep.*nest/)
    expect((await w.readJson('content/news.json')).properties).toMatchObject({
      title: 'news edited on the server',
    })
    expect(await w.exists('content/deep.json')).toBe(false)
    // In the workspace: a file nesting 5,000 levels, next to a good edit.
    const homeFile = await w.readJson('content/home.json')
    await writeFile(
      w.file('content/contact.json'),
      `{"id":"contact","schemaId":"section","properties":${nestedText(5000)}}\n`,
    )
    await w.writeJson('content/home.json', {
      ...homeFile,
      properties: { ...(homeFile.properties as object), title: 'home edited here' },
    })
    const push = await w.cli('--json', 'push')
    expect(push.exitCode, push.stderr).toBe(1)
    expect(push.stderr).not.toMatch(/internal error|RangeError/)
    expect(JSON.stringify(push.json.failed)).toMatch(/content\/contact\.json.*nest/)
    expect((await w.server.get('content', 'home'))?.properties).toMatchObject({ title: 'home edited here' })
    expect((await w.server.get('content', 'contact'))?.properties).toEqual(contentOf('contact').properties)
    expect(await outside()).toEqual(before)
    report(`attacks/deep-nesting/${dialect}`, { depth: 5000, failedAlone: 2, runsGoingOn: 2 })
  })

  test('item 18: a 500 on a listing is a safety stop (exit 4) for every kind', async () => {
    const w = keep(
      await startWorld(dialect, {
        resources: ['schemas', 'content', 'media', 'forms', 'connections'],
      }),
    )
    expect((await w.cli('sync')).exitCode).toBe(0)
    const files = await filesUnder(w.root)
    for (const segment of ['schemas', 'content', 'media', 'forms', 'connections']) {
      w.proxy.override = (method, route) =>
        method === 'GET' && route.endsWith(`/${segment}`) ? { status: 500, body: 'boom' } : undefined
      // Every kind for the commands that write to the server; pull and status (a retried 500
      // costs seconds each) for a JSON kind and media.
      const commands = ['content', 'media'].includes(segment)
        ? ['sync', 'push', 'pull', 'status']
        : ['sync', 'push']
      for (const command of commands) {
        const run = await w.cli(command)
        expect(run.exitCode, `${segment} ${command}: ${run.stderr}`).toBe(4)
        expect(run.stderr).toMatch(/safety stop/)
      }
    }
    w.proxy.override = undefined
    expect(await filesUnder(w.root)).toEqual(files)
    report(`attacks/listing-500/${dialect}`, {
      kinds: 5,
      commands: 'sync, push (all kinds); pull, status (content, media)',
      exit: 4,
    })
  })

  test('item 18: a file gone just before its upload fails by name, not as "could not reach the server", and is not retried', async () => {
    const w = keep(await startWorld(dialect, { resources: ['schemas', 'content', 'media'] }))
    const outside = await sentinel(w)
    await mkdir(w.file('media/docs'), { recursive: true })
    await writeFile(w.file('media/docs/report.txt'), 'report v1\n')
    expect((await w.cli('sync')).exitCode).toBe(0)
    const before = await outside()
    await writeFile(w.file('media/docs/report.txt'), 'report v2, longer\n')
    // The push checks the file, then asks the server for the item, then opens the file to send
    // it: the file goes in between (an editor's save by rename, a cleanup).
    w.proxy.override = (method, route) => {
      if (
        method === 'GET' &&
        /\/media\/[0-9a-f]+$/.test(route) &&
        existsSync(w.file('media/docs/report.txt'))
      )
        rmSync(w.file('media/docs/report.txt'))
      return undefined
    }
    w.proxy.seen.length = 0
    const push = await w.cli('--json', 'push')
    w.proxy.override = undefined
    expect(push.exitCode, push.stderr).toBe(1)
    const failed = JSON.stringify(push.json?.failed ?? push.json)
    expect(failed).toMatch(/report\.txt/)
    expect(failed).toMatch(/ENOENT|no such file/)
    expect(`${failed}${push.stderr}`).not.toMatch(/could not reach/)
    expect(w.proxy.seen.filter((r) => /^POST .*\/media\/[0-9a-f]+$/.test(r)).length).toBeLessThanOrEqual(1)
    expect(await outside()).toEqual(before)
    report(`attacks/local-enoent/${dialect}`, { exit: push.exitCode })
  })

  test('item 18: status is not clean while pull fails on a server item it cannot store', async () => {
    const w = keep(await startWorld(dialect))
    const outside = await sentinel(w)
    expect((await w.cli('sync')).exitCode).toBe(0)
    const before = await outside()
    const home = await w.server.get('content', 'home')
    const deepText = JSON.stringify({ ...home, id: 'deep', properties: 0 }).replace(
      '"properties":0',
      `"properties":${nestedText(5000)}`,
    )
    const listed = JSON.stringify(await w.server.list('content'))
    w.proxy.override = (method, route) => {
      if (method !== 'GET') return undefined
      if (/\/content$/.test(route)) return { status: 200, body: `${listed.slice(0, -1)},${deepText}]` }
      if (/\/content\/deep$/.test(route)) return { status: 200, body: deepText }
      return undefined
    }
    const pull = await w.cli('--json', 'pull')
    const status = await w.cli('--json', 'status')
    w.proxy.override = undefined
    expect(pull.exitCode).toBe(1)
    expect(status.json.clean, status.stdout).toBe(false)
    expect(status.exitCode).toBe(1)
    expect(await outside()).toEqual(before)
  })
})
