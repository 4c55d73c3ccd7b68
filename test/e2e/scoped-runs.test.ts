// A run that names files plans only those (src/engine/plan-paths.ts): `push`, `pull` and
// `status` of one file read that item by id, never a listing, and save only that item's record:
// one bucket of the state and one line of cms-sync.lock, whatever the size of the workspace.
// What a user checks: the requests the command made (the counting proxy's log), the files of
// the state and the lock's lines before and after.

import { appendFile, readFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { contentFile } from '../helpers/fixtures.js'
import { copyState } from '../helpers/state-files.js'
import { startWorld, type World } from '../helpers/sync-world.js'

let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

const ITEMS = 400
const ids = Array.from({ length: ITEMS }, (_, i) => `page-${String(i).padStart(4, '0')}`)

/** A workspace of ITEMS content items and a schema, synced once. */
async function largeWorld(): Promise<World> {
  const w = await startWorld('spec', { content: ids })
  world = w
  const first = await w.cli('sync')
  if (first.exitCode !== 0) throw new Error(`the first sync failed: ${first.stderr}`)
  return w
}

/** The requests made from now on (through the counting proxy). */
function requestsFrom(w: World): () => string[] {
  const start = w.proxy.seen.length
  return () => w.proxy.seen.slice(start)
}

const isListing = (request: string) =>
  /^GET \/api\/demo\/live\/(content|schemas|media|forms|connections)(\?.*)?$/.test(request)

const lockLines = async (w: World) => (await readFile(w.file('cms-sync.lock'), 'utf8')).split('\n')

describe('a run that names one file', () => {
  test('push reads that item by id and writes it, no listing; one bucket and one lock line are written', async () => {
    const w = await largeWorld()
    await w.editJson('content/page-0007.json', { properties: { title: 'edited here' } })
    const stateBefore = await copyState(w.root)
    const lockBefore = await lockLines(w)
    const requests = requestsFrom(w)
    const run = await w.cli('--json', 'push', 'content/page-0007.json')
    expect(run.stderr).toBe('')
    expect(run.exitCode).toBe(0)
    expect((await w.server.get('content', 'page-0007'))?.properties).toMatchObject({ title: 'edited here' })
    const made = requests()
    expect(made.filter(isListing)).toEqual([])
    expect(made.filter((r) => r.startsWith('GET /api/demo'))).toEqual([
      'GET /api/demo/live/content/page-0007',
    ])
    expect(made.filter((r) => !r.startsWith('GET'))).toEqual([
      expect.stringMatching(/^(PUT|POST) \/api\/demo\/live\/content\/page-0007$/),
    ])
    // The state: the one bucket holding that record is a new file, the index names it (and the
    // lock's stat is noted beside it); the other buckets are untouched.
    const stateAfter = await copyState(w.root)
    const gone = [...stateBefore.keys()].filter((name) => !stateAfter.has(name))
    const added = [...stateAfter.keys()].filter((name) => !stateBefore.has(name))
    const rewritten = [...stateAfter.keys()].filter(
      (name) => stateBefore.has(name) && !stateBefore.get(name)!.equals(stateAfter.get(name)!),
    )
    expect(gone).toHaveLength(1)
    expect(added).toHaveLength(1)
    expect(rewritten.sort()).toEqual(['index.json', 'lock-seen.json'])
    // The lock: the same lines but the one of that item.
    const lockAfter = await lockLines(w)
    expect(lockAfter).toHaveLength(lockBefore.length)
    const changed = lockAfter.filter((line, i) => line !== lockBefore[i])
    expect(changed).toHaveLength(1)
    expect(changed[0]).toContain('"path":"content/page-0007.json"')
  })

  test('status reads that item by id and reports it, no listing', async () => {
    const w = await largeWorld()
    await w.editJson('content/page-0011.json', { properties: { title: 'edited here' } })
    await w.setContent('page-0012', { properties: { title: 'edited there' } })
    const requests = requestsFrom(w)
    const run = await w.cli('--json', 'status', 'content/page-0011.json')
    expect(run.stderr).toBe('')
    expect(run.json.changes.map((c: { path: string; action: string }) => [c.path, c.action])).toEqual([
      ['content/page-0011.json', 'push'],
    ])
    const made = requests().filter((r) => r.startsWith('GET /api/demo'))
    expect(made).toEqual(['GET /api/demo/live/content/page-0011'])
    // A file that agrees with the server is known (no usage error), and clean.
    const same = await w.cli('--json', 'push', 'content/page-0050.json')
    expect(same.stderr).toBe('')
    expect(same.exitCode).toBe(0)
    const missing = await w.cli('push', 'content/page-9999.json')
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).toMatch(/did not match any file or server item/)
  })

  test('pull reads that item by id and writes the file, no listing; other server edits wait', async () => {
    const w = await largeWorld()
    await w.setContent('page-0021', { properties: { title: 'edited there' } })
    await w.setContent('page-0022', { properties: { title: 'also there' } })
    const requests = requestsFrom(w)
    const run = await w.cli('--json', 'pull', 'content/page-0021.json')
    expect(run.stderr).toBe('')
    expect(run.exitCode).toBe(0)
    expect(((await w.readJson('content/page-0021.json')).properties as { title: string }).title).toBe(
      'edited there',
    )
    expect(((await w.readJson('content/page-0022.json')).properties as { title: string }).title).not.toBe(
      'also there',
    )
    const made = requests()
    expect(made.filter(isListing)).toEqual([])
    expect(made.filter((r) => r.startsWith('GET /api/demo'))).toEqual([
      'GET /api/demo/live/content/page-0021',
    ])
  })

  test('a new file named is created on the server from a read by id that finds nothing', async () => {
    const w = await largeWorld()
    await w.writeJson('content/about.json', contentFile('about', { properties: { title: 'About' } }))
    const requests = requestsFrom(w)
    const run = await w.cli('--json', 'push', 'content/about.json')
    expect(run.exitCode).toBe(0)
    expect((await w.server.get('content', 'about'))?.properties).toMatchObject({ title: 'About' })
    expect(requests().filter(isListing)).toEqual([])
  })

  test('a folder named is still planned whole (its listing), and only its files are pushed', async () => {
    const w = await largeWorld()
    await w.editJson('content/page-0001.json', { properties: { title: 'one' } })
    await w.editJson('schemas/section.json', { name: 'Edited schema' })
    const run = await w.cli('--json', 'push', 'content')
    expect(run.exitCode).toBe(0)
    expect((await w.server.get('content', 'page-0001'))?.properties).toMatchObject({ title: 'one' })
    expect((await w.server.get('schema', 'section'))?.name).toBe('Section')
  })

  test('files deleted here are deleted on the server under the same guards, counted from the state', async () => {
    const w = await largeWorld()
    await appendFile(w.file('cms-sync.yaml'), 'safety: { maxDeletes: 1 }\n')
    await w.remove('content/page-0030.json')
    await w.remove('content/page-0031.json')
    const stopped = await w.cli('push', 'content/page-0030.json', 'content/page-0031.json')
    expect(stopped.exitCode).toBe(4)
    expect(stopped.stderr).toMatch(/--allow-deletes/)
    expect(await w.server.get('content', 'page-0030')).toBeTruthy()
    const one = await w.cli('--json', 'push', 'content/page-0030.json')
    expect(one.exitCode).toBe(0)
    expect(await w.server.get('content', 'page-0030')).toBeFalsy()
    expect(await w.server.get('content', 'page-0031')).toBeTruthy()
  })

  test('status of one deleted file says what watch holds, counting every deletion of the workspace', async () => {
    const w = await largeWorld()
    await appendFile(w.file('cms-sync.yaml'), 'safety: { maxDeletes: 1 }\n')
    await w.remove('content/page-0040.json')
    await w.remove('content/page-0041.json')
    const whole = await w.cli('--json', 'status')
    const one = await w.cli('--json', 'status', 'content/page-0040.json')
    const heldPaths = (run: typeof one) => run.json.held.flatMap((h: { paths: string[] }) => h.paths)
    expect(heldPaths(whole)).toContain('content/page-0040.json')
    expect(heldPaths(one)).toEqual(['content/page-0040.json'])
  })
})
