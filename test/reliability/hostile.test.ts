// Bad input from the server: ids that try to escape the workspace or clash with reserved
// names, malformed listings, a body far larger than any item, a redirect to another host.
// Nothing may be written outside the workspace, the state must stay readable and unchanged
// by a refused run, and the run must fail with a message that says what went wrong.

import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { loadState } from '../../src/state/state-file.js'
import { decodeId } from '../../src/workspace/file-names.js'
import { cli } from '../helpers/cli.js'
import { contentOf, SECTION_SCHEMA } from '../helpers/sync-world.js'
import { endlessJson, type HostileServer, json, startHostileServer } from './hostile-server.js'
import { runCli } from './processes.js'
import { filesUnder, report } from './support.js'

const TOKEN = 'hostile-secret-token-5f2c9d'
const P = '/api/demo/live'

const BAD_IDS = [
  '../../etc/passwd',
  '../outside',
  '/abs/path',
  '/tmp/cms-sync-escape',
  'a\u0000b',
  'x'.repeat(300),
  'CON',
  'nul.txt',
  '.',
  '..',
  '.cms-sync/state',
  '.cms-sync',
  '..\\..\\windows',
  'C:\\evil',
  'line\nbreak',
  '%2e%2e%2fencoded',
  ' trailing. ',
]

let servers: HostileServer[] = []
afterEach(async () => {
  for (const s of servers) await s.close()
  servers = []
})

async function workspace(
  server: string,
  extra = '',
): Promise<{ base: string; root: string; env: NodeJS.ProcessEnv }> {
  const base = await mkdtemp(path.join(tmpdir(), 'cms-sync-hostile-'))
  const root = path.join(base, 'site')
  await mkdir(root)
  await writeFile(path.join(base, 'neighbour.txt'), 'a file next to the workspace\n')
  await writeFile(
    path.join(root, 'cms-sync.yaml'),
    `server: ${server}\nproject: demo\nenvironment: live\nresources: [schemas, content]\ndialect: spec\n${extra}`,
  )
  return { base, root, env: { CMS_SYNC_TOKEN: TOKEN, XDG_CONFIG_HOME: path.join(base, 'xdg') } }
}

/** Everything outside the workspace folder, for before/after comparison. */
async function outside(base: string): Promise<Map<string, string>> {
  return filesUnder(base, (rel) => rel === 'site' || rel.startsWith('site/') || rel.startsWith('xdg/'))
}

function serving(listing: { schema?: unknown; content?: unknown }) {
  return (
    req: import('node:http').IncomingMessage,
    res: import('node:http').ServerResponse,
    route: string,
  ) => {
    if (route === `${P}/schemas`) return json(res, 200, listing.schema ?? [SECTION_SCHEMA])
    if (route === `${P}/content`) return json(res, 200, listing.content ?? [])
    const item = /^\/api\/demo\/live\/content\/(.+)$/.exec(route)
    if (item && req.method === 'GET') {
      const id = decodeURIComponent(item[1]!)
      const found = (listing.content as { id: string }[] | undefined)?.find((c) => c.id === id)
      return found ? json(res, 200, found) : json(res, 404, 'not found')
    }
    json(res, 404, 'no such route')
  }
}

test('ids that try to escape the workspace are encoded or refused, never followed', async () => {
  const content = [contentOf('good'), ...BAD_IDS.map((id) => contentOf(id))]
  const schema = [SECTION_SCHEMA, ...BAD_IDS.map((id) => ({ ...SECTION_SCHEMA, id }))]
  const hostile = await startHostileServer(serving({ schema, content }))
  servers.push(hostile)
  const { base, root, env } = await workspace(hostile.url)
  const before = await outside(base)
  const run = await cli(['-C', root, 'pull'], { cwd: root, env })
  // Then the run fails clearly for the ids that cannot be files and still writes the good one
  expect(run.exitCode, run.stderr).toBe(1)
  expect(run.stdout + run.stderr, run.stdout).toMatch(/cannot be stored as a file/)
  expect(JSON.parse(await readFile(path.join(root, 'content/good.json'), 'utf8')).id).toBe('good')
  // And nothing outside the workspace changed, and nothing landed at an absolute path
  expect(await outside(base)).toEqual(before)
  for (const p of ['/abs/path.json', '/abs', '/tmp/cms-sync-escape.json', '/etc/passwd.json'])
    expect(existsSync(p), p).toBe(false)
  // And every file inside is a plain file in its kind's folder whose name maps back to exactly one id
  const written = [...(await filesUnder(root, (rel) => rel.startsWith('.cms-sync')))]
  const ids = new Set<string>()
  for (const [rel] of written) {
    // Our own two files at the root: the settings and the committed base.
    if (rel === 'cms-sync.yaml' || rel === 'cms-sync.lock') continue
    const [folder, name, ...deeper] = rel.split('/')
    expect(['content', 'schemas'], rel).toContain(folder)
    expect(deeper, rel).toEqual([])
    const id = decodeId(name!.replace(/\.json$/, ''))
    expect(id, rel).toBeDefined()
    ids.add(`${folder}:${id}`)
  }
  // The state is readable and holds no id that was refused
  const state = await loadState(root)
  expect(Object.values(state!.items).every((i) => i.id.length < 300)).toBe(true)
  // and its folder holds the store's own files only: no item (the id ".cms-sync/state" among
  // them) was written into it
  const stateDir = path.join(root, '.cms-sync', 'state')
  const index = JSON.parse(await readFile(path.join(stateDir, 'index.json'), 'utf8'))
  const own = new Set([
    'index.json',
    'lock-seen.json',
    ...Object.values(index.files as Record<string, string>),
  ])
  expect((await readdir(stateDir)).filter((name) => !own.has(name))).toEqual([])
  report('hostile/ids', {
    idsTried: BAD_IDS.length * 2,
    writtenAsEncodedFiles: ids.size - 2,
    refused: BAD_IDS.length * 2 - (ids.size - 2),
    writtenOutsideWorkspace: 0,
  })
})

const MALFORMED: [string, string][] = [
  ['truncated JSON', '[{"id": "ho'],
  ['HTML', '<html><body>Bad gateway</body></html>'],
  ['an object', '{"items": []}'],
  ['items without ids', '[{"title": "x"}]'],
  ['numbers', '[1, 2, 3]'],
  ['a duplicate id', `[${JSON.stringify(contentOf('a'))}, ${JSON.stringify(contentOf('a'))}]`],
  ['null', 'null'],
  ['an empty body', ''],
]

test('malformed listings stop the run (exit 4) with nothing changed on either side', async () => {
  let body = JSON.stringify([contentOf('home'), contentOf('news')])
  const writes: string[] = []
  const hostile = await startHostileServer((req, res, route) => {
    if (req.method !== 'GET') writes.push(`${req.method} ${route}`)
    if (route === `${P}/content`) return json(res, 200, body)
    return serving({})(req, res, route)
  })
  servers.push(hostile)
  const { base, root, env } = await workspace(hostile.url)
  expect((await cli(['-C', root, 'sync'], { cwd: root, env })).exitCode).toBe(0)
  // A local edit that a run must not push while the listing is broken
  const home = path.join(root, 'content/home.json')
  await writeFile(home, (await readFile(home, 'utf8')).replace('"home"\n', '"home local"\n'))
  const tried: string[] = []
  for (const [what, text] of MALFORMED) {
    body = text
    const before = { inside: await filesUnder(root), outside: await outside(base) }
    const run = await cli(['-C', root, 'sync'], { cwd: root, env })
    expect(run.exitCode, `${what}: ${run.stderr}`).toBe(4)
    expect(run.stderr, what).toMatch(/listing|list content/)
    expect(run.stderr, what).not.toMatch(/at .*\.js:\d+/) // a message, not a stack trace
    expect(await filesUnder(root), what).toEqual(before.inside)
    expect(await outside(base), what).toEqual(before.outside)
    tried.push(what)
  }
  expect(writes).toEqual([])
  report('hostile/malformed-listings', { listingsTried: tried.length, changed: 0, writesSent: writes.length })
})

test('a body far larger than any listing is cut off early, and the run fails clearly', async () => {
  const total = 600 * 1024 * 1024
  const hostile = await startHostileServer((req, res, route) => {
    if (route === `${P}/content`) return endlessJson(hostile, res, total)
    return serving({})(req, res, route)
  })
  servers.push(hostile)
  const { root, env } = await workspace(hostile.url)
  // In its own process: the cap, not the test's memory, must stop it.
  const run = await runCli(['-C', root, 'pull'], env).done
  expect(run.code, run.stderr).toBe(4)
  expect(run.stderr).toMatch(/larger than 128 MB.*raise limits\.listingMB in cms-sync\.yaml/)
  expect(hostile.bytesSent).toBeLessThan(total)
  expect(existsSync(path.join(root, 'content'))).toBe(false)
  report('hostile/huge-body', {
    offeredMB: 600,
    sentBeforeTheClientHungUpMB: Math.round(hostile.bytesSent / 2 ** 20),
  })
})

test('a redirect to another host is not followed, and the token never goes there', async () => {
  const elsewhere = await startHostileServer((_req, res) => json(res, 200, []))
  servers.push(elsewhere)
  const hostile = await startHostileServer((_req, res, route) => {
    res.writeHead(302, { location: `${elsewhere.url}${route}?steal=1` })
    res.end()
  })
  servers.push(hostile)
  const { root, env } = await workspace(hostile.url)
  const run = await cli(['-C', root, 'sync'], { cwd: root, env })
  expect(run.exitCode).not.toBe(0)
  expect(run.stderr).toMatch(/redirect/)
  expect(run.stderr).not.toContain(TOKEN)
  expect(elsewhere.seen).toEqual([])
  report('hostile/redirect', { redirectsFollowed: elsewhere.seen.length })
})

test('the listing cap is limits.listingMB: a listing over it stops (exit 4) before it is read whole, one under it is pulled', async () => {
  // About 3 MB of real content: 48 items of 64 KB
  const content = Array.from({ length: 48 }, (_, i) =>
    contentOf(`big-${i}`, { properties: { title: 'y'.repeat(65_000) } }),
  )
  const body = JSON.stringify(content)
  let declare = false
  const hostile = await startHostileServer((req, res, route) => {
    if (route === `${P}/content`) {
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(declare ? { 'content-length': Buffer.byteLength(body) } : {}),
      })
      return res.end(body)
    }
    return serving({ content })(req, res, route)
  })
  servers.push(hostile)
  const small = await workspace(hostile.url, 'limits: { listingMB: 1 }\n')
  const refused: number[] = []
  for (const declared of [false, true]) {
    declare = declared
    const run = await cli(['-C', small.root, 'pull'], { cwd: small.root, env: small.env })
    expect(run.exitCode, run.stderr).toBe(4)
    expect(run.stderr).toMatch(
      /content listing.*larger than 1 MB.*raise limits\.listingMB in cms-sync\.yaml/s,
    )
    expect(existsSync(path.join(small.root, 'content'))).toBe(false)
    refused.push(run.exitCode)
  }
  const large = await workspace(hostile.url, 'limits: { listingMB: 8 }\n')
  const pulled = await cli(['-C', large.root, 'pull'], { cwd: large.root, env: large.env })
  expect(pulled.exitCode, pulled.stderr).toBe(0)
  expect((await readdir(path.join(large.root, 'content'))).length).toBe(48)
  report('hostile/listing-cap', {
    listingMB: Math.round(body.length / 2 ** 20),
    capMB: 1,
    refused: refused.length,
    pulledWithCap8MB: 48,
  })
})
