// Bad input from the server, for media: names and folders that try to leave the workspace or
// cannot be files on every platform, ids that do the same through a name collision, malformed
// media listings, and a media body far larger than any limit. The CLI runs as its own process
// with TMPDIR inside the test's folder, so the whole folder tree around the workspace (its temp
// folder included) is compared before and after: nothing may be written outside the workspace.

import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import type { ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { loadState } from '../../src/state/state-file.js'
import { mediaPathProblem, parseMediaIndex } from '../../src/workspace/media-index.js'
import { cli } from '../helpers/cli.js'
import { type HostileServer, json, startHostileServer } from './hostile-server.js'
import { runCli } from './processes.js'
import { filesUnder, report } from './support.js'

const P = '/api/demo/live'

type Listed = { id: unknown; name: unknown; folder?: unknown }

/** [id, name, folder, why it is hostile] */
const HOSTILE: [string, string, string, string][] = [
  ['e1', '../../escape.txt', '/', 'a name that climbs'],
  ['e2', 'ok.txt', '/../../outside/', 'a folder that climbs'],
  ['e3', '/abs/path.txt', '/', 'an absolute name'],
  ['e4', 'a\u0000b.txt', '/', 'NUL in the name'],
  ['e5', `${'x'.repeat(300)}.txt`, '/', 'a name over 255 bytes'],
  ['e6', 'CON', '/', 'a Windows device name'],
  ['e7', 'NUL.txt', '/', 'a Windows device name with an extension'],
  ['e8', 'com1.png', '/aux/', 'Windows device names as name and folder'],
  ['e9', '.', '/', 'the folder itself'],
  ['e10', '..', '/', 'the parent folder'],
  ['e11', 'x.txt', '/./', 'a "." folder'],
  ['e12', 'a/b.txt', '/', 'a slash in the name'],
  ['e13', '..\\..\\win.txt', '/', 'backslashes'],
  ['e14', 'line\nbreak.txt', '/', 'a newline'],
  ['e15', 'state.json', '/../.cms-sync/', "a folder into cms-sync's own state"],
  ['e16', 'ok.txt', `/${'d'.repeat(300)}/`, 'a folder name over 255 bytes'],
]

/** Same place after the server's folder spelling is normalised: each must get a file of its own. */
const COLLIDING: [string, string, string][] = [
  ['dup-1', 'same.txt', '/img/'],
  ['dup-2', 'same.txt', 'img'],
  ['../../../../../../../tmp/cms-sync-evil', 'same.txt', '//img//'],
  ['a/b\\c', 'same.txt', '/img/'],
  ['x'.repeat(300), 'same.txt', '/img/'],
]

const bytesOf = (id: string) => `bytes of ${id}\n`

let servers: HostileServer[] = []
afterEach(async () => {
  for (const s of servers) await s.close()
  servers = []
})

function mediaServer(listing: () => string, big?: (res: ServerResponse) => void) {
  return startHostileServer((req, res, route) => {
    if (route === `${P}/media`) return json(res, 200, listing())
    const bytes = /^\/media\/demo\/live\/(.+)$/.exec(route)
    if (bytes && req.method === 'GET') {
      const id = decodeURIComponent(bytes[1]!)
      if (id === 'big' && big) return big(res)
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      return res.end(bytesOf(id))
    }
    json(res, 404, 'no such route')
  })
}

async function workspace(server: string, extra = '') {
  const base = await mkdtemp(path.join(tmpdir(), 'cms-sync-hostile-media-'))
  const root = path.join(base, 'deep', 'er', 'site')
  await mkdir(root, { recursive: true })
  await mkdir(path.join(base, 'tmp'))
  await writeFile(path.join(base, 'neighbour.txt'), 'next to the workspace\n')
  await writeFile(
    path.join(root, 'cms-sync.yaml'),
    `server: ${server}\nproject: demo\nenvironment: live\nresources: [media]\ndialect: spec\n${extra}`,
  )
  const env = {
    CMS_SYNC_TOKEN: 'hostile-media-token-51c0',
    XDG_CONFIG_HOME: path.join(base, 'xdg'),
    TMPDIR: path.join(base, 'tmp'),
  }
  return { base, root, env }
}

/** The whole tree around the workspace (its temp folder included), without the workspace. */
const outside = (base: string) =>
  filesUnder(base, (rel) => rel === 'deep/er/site' || rel.startsWith('deep/er/site/'))

test('media names, folders and ids that try to escape or cannot be files everywhere are refused by name; collisions get files of their own', async () => {
  const listed: Listed[] = [
    { id: 'good', name: 'fine.txt', folder: '/' },
    ...HOSTILE.map(([id, name, folder]) => ({ id, name, folder })),
    ...COLLIDING.map(([id, name, folder]) => ({ id, name, folder })),
  ]
  const hostile = await mediaServer(() => JSON.stringify(listed))
  servers.push(hostile)
  const { base, root, env } = await workspace(hostile.url)
  const before = await outside(base)
  const run = await runCli(['-C', root, 'pull'], env).done
  const output = run.stdout + run.stderr
  // Then the run fails (exit 1), naming every refused item; the others are written
  expect(run.code, output).toBe(1)
  for (const [id, , , why] of HOSTILE) expect(output, `${id}: ${why}`).toContain(`media "${id}"`)
  expect(await readFile(path.join(root, 'media/fine.txt'), 'utf8')).toBe(bytesOf('good'))
  // And nothing outside the workspace changed, and no climbing path exists
  expect(await outside(base)).toEqual(before)
  for (const p of ['/abs/path.txt', '/tmp/cms-sync-evil', '/tmp/cms-sync-evil.txt', '/tmp/same~..'])
    expect(existsSync(p), p).toBe(false)
  // And every file in media/ is listed in a valid media.yaml under a safe path, each with the bytes of its id
  const index = parseMediaIndex(await readFile(path.join(root, 'media.yaml'), 'utf8'))
  const files = await filesUnder(path.join(root, 'media'))
  expect([...files.keys()].sort()).toEqual([...index.keys()].sort())
  for (const [rel, id] of index) {
    expect(mediaPathProblem(rel), rel).toBeUndefined()
    expect(await readFile(path.join(root, 'media', rel), 'utf8'), rel).toBe(bytesOf(id))
  }
  // The colliding items that could be stored each have their own file; none was lost silently
  const stored = new Set(index.values())
  const collided = COLLIDING.map(([id]) => id)
  for (const id of collided) expect(stored.has(id) || output.includes(`media "${id}"`), output).toBe(true)
  expect(stored.has('dup-1') && stored.has('dup-2')).toBe(true)
  const state = await loadState(root)
  expect(
    Object.values(state!.items).every((item) => mediaPathProblem(item.path.slice(6)) === undefined),
  ).toBe(true)
  report('hostile/media-names', {
    itemsTried: listed.length,
    refusedByName: listed.length - index.size,
    writtenAsFiles: index.size,
    collidingItemsWithOwnFile: collided.filter((id) => stored.has(id)).length,
    writtenOutsideWorkspace: 0,
  })
})

const MALFORMED: [string, string][] = [
  ['truncated JSON', '[{"id": "a", "na'],
  ['HTML', '<html>Bad gateway</html>'],
  ['an object', '{"media": []}'],
  ['an item without a name', '[{"id": "a", "folder": "/"}]'],
  ['a numeric id', '[{"id": 7, "name": "a.txt"}]'],
  ['a name that is an object', '[{"id": "a", "name": {"x": 1}}]'],
  ['a duplicate id', '[{"id": "a", "name": "a.txt"}, {"id": "a", "name": "b.txt"}]'],
  ['null', 'null'],
  ['an empty body', ''],
]

test('malformed media listings stop the run (exit 4) with nothing changed', async () => {
  let body = JSON.stringify([{ id: 'keep', name: 'keep.txt', folder: '/' }])
  const hostile = await mediaServer(() => body)
  servers.push(hostile)
  const { base, root, env } = await workspace(hostile.url)
  // In-process (quicker): this test is about what the run decides, not about the temp tree.
  const sync = () => cli(['-C', root, 'sync'], { cwd: root, env })
  const first = await sync()
  expect(first.exitCode, first.stderr).toBe(0)
  await writeFile(path.join(root, 'media/new-local.txt'), 'a local file a broken run must not upload\n')
  for (const [what, text] of MALFORMED) {
    body = text
    const before = { inside: await filesUnder(root), outside: await outside(base) }
    const run = await sync()
    expect(run.exitCode, `${what}: ${run.stderr}`).toBe(4)
    expect(run.stderr, what).toMatch(/could not list media/)
    expect(await filesUnder(root), what).toEqual(before.inside)
    expect(await outside(base), what).toEqual(before.outside)
  }
  expect(hostile.seen.filter((r) => !r.startsWith('GET '))).toEqual([])
  report('hostile/media-listings', { listingsTried: MALFORMED.length, changed: 0, writesSent: 0 })
})

test('a media body far larger than the limit is cut off, named, and leaves no file behind', async () => {
  const total = 64 * 1024 * 1024
  let sent = 0
  let declare = false
  const chunk = Buffer.alloc(64 * 1024, 0x61)
  const hostile = await mediaServer(
    () =>
      JSON.stringify([
        { id: 'small', name: 'small.txt', folder: '/' },
        { id: 'big', name: 'big.bin', folder: '/' },
      ]),
    (res) => {
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        ...(declare ? { 'content-length': total } : {}),
      })
      const pump = (): void => {
        while (sent < total) {
          sent += chunk.length
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        res.end()
      }
      res.on('close', () => res.removeAllListeners('drain'))
      pump()
    },
  )
  servers.push(hostile)
  const { base, root, env } = await workspace(hostile.url, 'limits: { mediaMB: 2 }\n')
  const before = await outside(base)
  const figures: Record<string, number> = {}
  for (const declared of [false, true]) {
    declare = declared
    sent = 0
    const run = await runCli(['-C', root, 'pull'], env).done
    expect(run.code, run.stderr).toBe(1)
    expect(run.stdout + run.stderr).toMatch(/media "big".*larger than 2 MB.*limits\.mediaMB/)
    expect(sent).toBeLessThan(total)
    expect(existsSync(path.join(root, 'media/big.bin'))).toBe(false)
    expect(await readFile(path.join(root, 'media/small.txt'), 'utf8')).toBe(bytesOf('small'))
    // No partial download is left anywhere in the workspace
    const left = [...(await filesUnder(root)).keys()].filter((rel) => rel.includes('tmp/'))
    expect(left).toEqual([])
    figures[declared ? 'sentWithLengthDeclaredMB' : 'sentChunkedMB'] = Math.round(sent / 2 ** 20)
  }
  expect(await outside(base)).toEqual(before)
  report('hostile/media-huge-body', { offeredMB: total / 2 ** 20, limitMB: 2, ...figures })
})
