// Bad input from the server, for media: names and folders that try to leave the workspace or
// cannot be files on every platform, ids that do the same through a name collision, malformed
// media listings, and a media body far larger than any limit. The CLI runs as its own process
// with TMPDIR inside the test's folder, so the whole folder tree around the workspace (its temp
// folder included) is compared before and after: nothing may be written outside the workspace.

import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import type { ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { createMediaApi } from '../../src/remote/media.js'
import { loadState } from '../../src/state/state-file.js'
import { mediaPathProblem, parseMediaIndex } from '../../src/workspace/media-index.js'
import { cli } from '../helpers/cli.js'
import { startWorld, type World } from '../helpers/sync-world.js'
import { type HostileServer, json, startHostileServer } from './hostile-server.js'
import { runCli } from './processes.js'
import { bytesUnder, filesUnder, report } from './support.js'

const P = '/api/demo/live'

type Listed = { id: unknown; name: unknown; folder?: unknown }

/** [id, name, folder, why it is hostile] */
const HOSTILE: [string, string, string, string][] = [
  ['e1', '../../escape.txt', '/', 'a name that climbs'],
  ['e2', 'ok.txt', '/../../outside/', 'a folder that climbs'],
  ['e3', '/abs/path.txt', '/', 'an absolute name'],
  ['e4', 'a\u0000b.txt', '/', 'NUL in the name'],
  ['e5', `${'x'.repeat(300)}.txt`, '/', 'a name over 255 bytes'],
  ['e9', '.', '/', 'the folder itself'],
  ['e10', '..', '/', 'the parent folder'],
  ['e11', 'x.txt', '/./', 'a "." folder'],
  ['e12', 'a/b.txt', '/', 'a slash in the name'],
  ['e13', '..\\..\\win.txt', '/', 'backslashes'],
  ['e14', 'line\nbreak.txt', '/', 'a newline'],
  ['e15', 'state.json', '/../.cms-sync/', "a folder into cms-sync's own state"],
  ['e16', 'ok.txt', `/${'d'.repeat(300)}/`, 'a folder name over 255 bytes'],
  ['e17', '.gitignore', '/', 'a name git reads as settings'],
  ['e18', 'HEAD', '/.git/', 'a folder that would be a repository'],
  ['e19', '.GITATTRIBUTES', '/img/', 'a name git reads, in another case, deeper'],
]

/** Names Windows cannot hold, stored under their reversible encoding: [id, name, folder, file]. */
const ENCODED: [string, string, string, string][] = [
  ['e6', 'CON', '/', '%43ON'],
  ['e7', 'NUL.txt', '/', '%4EUL.txt'],
  ['e8', 'com1.png', '/aux/', '%61ux/%63om1.png'],
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
    ...ENCODED.map(([id, name, folder]) => ({ id, name, folder })),
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
  for (const [id, , , file] of ENCODED) {
    expect(output).not.toContain(`media "${id}"`)
    expect(await readFile(path.join(root, 'media', file), 'utf8'), file).toBe(bytesOf(id))
  }
  for (const p of ['media/.gitignore', 'media/.git', 'media/img/.GITATTRIBUTES'])
    expect(existsSync(path.join(root, p)), p).toBe(false)
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
    storedUnderEncodedName: ENCODED.length,
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

// Names a real server can hold (set by a rename, which both dialects store as given) that a
// workspace must not write as they are: names git or cms-sync read as settings (reported and
// kept on the server), names Windows or macOS cannot hold or would merge (encoded reversibly),
// and names the built-in junk rules match (mirrored like any other file, never hidden).

const RESERVED: [string, string, string][] = [
  // [name, folder, bytes]
  ['.gitignore', '', '*\n'],
  ['.gitattributes', 'img', '* text=auto eol=crlf\n'],
  ['config', '.git', '[core]\n\tbare = true\n'],
  ['.cmsyncignore', 'docs', '*\n'],
]
const NFC = 'caf\u00e9.txt'
const NFD = 'cafe\u0301.txt'
const AWKWARD: [string, string][] = [
  // [name, folder]
  ['a:b?.png', ''],
  ['Q<>|"x.txt', ''],
  ['trail.', ''],
  ['space ', ''],
  ['CON', ''],
  ['nul.txt', 'aux'],
  ['100%.png', ''],
  ['Home.png', ''],
  ['home.png', ''],
  [NFC, ''],
  [NFD, ''],
  ['x.png', 'Img'],
  ['y.png', 'img'],
]
const JUNK_LOOKING = ['budget.xlsx.1', 'notes.tmp', 'Thumbs.db', '~$report.docx', 'archive.zip~']

/** Whether a relative path checks out on Windows, macOS and Linux alike (one path; see folded below). */
function portable(rel: string): boolean {
  return rel
    .split('/')
    .every(
      (part) =>
        !/[:*?"<>|\\]/.test(part) &&
        !/[. ]$/.test(part) &&
        !/^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i.test(part) &&
        part.normalize('NFC') === part,
    )
}

describe.each(['spec', 'upstream'] as const)(
  'media names a checkout cannot take as they are (%s dialect)',
  (dialect) => {
    let world: World | undefined
    afterEach(async () => {
      await world?.close()
      world = undefined
    })

    test('reserved names are reported and kept, awkward names are encoded and round trip exactly, junk-looking names are mirrored', async () => {
      world = await startWorld(dialect, { resources: ['media'], content: [] })
      const w = world
      const api = createMediaApi(w.server)
      const scratch = await mkdtemp(path.join(tmpdir(), 'cms-sync-media-names-'))
      const put = async (name: string, folder: string, bytes: string): Promise<string> => {
        const file = path.join(scratch, `upload-${Math.random().toString(36).slice(2)}`)
        await writeFile(file, bytes)
        const { id } = await api.upload({ path: file, size: Buffer.byteLength(bytes), name: 'upload.bin' })
        await api.rename(id, name)
        if (folder !== '') await api.move(id, folder)
        return id
      }
      const ids = new Map<string, string>() // `${folder}/${name}` -> id
      for (const [name, folder, bytes] of RESERVED)
        ids.set(`${folder}/${name}`, await put(name, folder, bytes))
      for (const [name, folder] of AWKWARD)
        ids.set(`${folder}/${name}`, await put(name, folder, `bytes of ${folder}/${name}\n`))
      for (const name of JUNK_LOOKING) ids.set(`/${name}`, await put(name, '', `bytes of /${name}\n`))
      /** The server's media: `${folder}/${name}` -> [id, bytes]. */
      const serverMedia = async () => {
        const out = new Map<string, [string, string]>()
        for (const m of await api.list()) {
          const file = path.join(scratch, `download-${m.id}`)
          await api.download(m.id, file)
          out.set(`${m.folder}/${m.name}`, [m.id, await readFile(file, 'utf8')])
        }
        return out
      }
      const serverBefore = await serverMedia()
      expect(serverBefore.size).toBe(ids.size)
      // A sentinel tree around the workspace
      const base = path.dirname(w.root)
      await writeFile(path.join(base, 'sentinel.txt'), 'beside the workspace\n')
      const outsideNow = () => filesUnder(base, (rel) => rel === 'site' || rel.startsWith('site/'))
      const outsideBefore = await outsideNow()

      // When the shipped CLI pulls
      const pull = await runCli(['-C', w.root, '--json', 'pull'], w.env).done
      const pulled = JSON.parse(pull.stdout)
      // Then each reserved item is reported as not mirrored (exit 1), and no file has its name
      expect(pull.code, pull.stderr).toBe(1)
      const failedIds = (pulled.failed as { id: string; error: string }[]).map((f) => f.id).sort()
      const reservedIds = RESERVED.map(([name, folder]) => ids.get(`${folder}/${name}`)!).sort()
      expect(failedIds).toEqual(reservedIds)
      for (const f of pulled.failed) expect(f.error).toMatch(/not mirrored: .*git or cms-sync reads/)
      const files = await bytesUnder(w.file('media'))
      for (const rel of files.keys())
        expect(
          RESERVED.some(([name]) => rel.split('/').includes(name)),
          rel,
        ).toBe(false)
      // And every other item has a file whose path checks out everywhere, none folding onto another
      const index = parseMediaIndex(await readFile(w.file('media.yaml'), 'utf8'))
      expect([...files.keys()].sort()).toEqual([...index.keys()].sort())
      expect(index.size).toBe(AWKWARD.length + JUNK_LOOKING.length)
      for (const rel of index.keys()) expect(portable(rel), rel).toBe(true)
      const folded = new Set([...index.keys()].map((rel) => rel.normalize('NFC').toLowerCase()))
      expect(folded.size).toBe(index.size)
      // (folders too: `Img/` and `img/` would be one folder there; each item keeps its server folder)
      const folders = new Set(
        [...index.keys()].filter((r) => r.includes('/')).map((r) => path.posix.dirname(r)),
      )
      expect(new Set([...folders].map((f) => f.toLowerCase())).size).toBe(folders.size)
      const serverOf = new Map([...serverBefore].map(([key, [id, bytes]]) => [id, { key, bytes }]))
      for (const [rel, id] of index) expect(files.get(rel)!.toString(), rel).toBe(serverOf.get(id)!.bytes)
      // And git sees every media file (no .gitignore of the server's hides one)
      const git = (...args: string[]) => execFileSync('git', ['-C', w.root, ...args], { encoding: 'utf8' })
      // (.cms-sync/ left out, as `cms-sync init` writes it: a committed one is refused)
      await writeFile(w.file('.gitignore'), '.cms-sync/\n')
      git('init', '-q')
      git('add', '-A')
      const committed = git('-c', 'core.quotepath=off', 'ls-files', 'media').split('\n').filter(Boolean)
      expect(committed.length).toBe(index.size)
      // And status names the reserved items too (never "clean"), with nothing to pull
      const status = await w.cli('--json', 'status')
      expect(status.exitCode).toBe(1)
      const statusJson = status.json as { clean: boolean; changes: unknown[]; problems: { id: string }[] }
      expect(statusJson.clean).toBe(false)
      expect(statusJson.changes).toEqual([])
      expect(statusJson.problems.map((p) => p.id).sort()).toEqual(reservedIds)

      // When the workspace pulls again: nothing changes
      const tree = await filesUnder(w.root, (rel) => rel.startsWith('.cms-sync') || rel.startsWith('.git'))
      expect((await w.cli('pull')).exitCode).toBe(1)
      expect(
        await filesUnder(w.root, (rel) => rel.startsWith('.cms-sync') || rel.startsWith('.git')),
      ).toEqual(tree)
      // And a fresh workspace pulling the same server writes the same files and media.yaml
      const clone = path.join(base, 'clone')
      await mkdir(clone)
      await writeFile(path.join(clone, 'cms-sync.yaml'), await readFile(w.file('cms-sync.yaml')))
      expect((await w.cliIn(clone, 'pull')).exitCode).toBe(1)
      expect(await filesUnder(path.join(clone, 'media'))).toEqual(await filesUnder(w.file('media')))
      expect(await readFile(path.join(clone, 'media.yaml'), 'utf8')).toBe(
        await readFile(w.file('media.yaml'), 'utf8'),
      )
      await rm(clone, { recursive: true })

      // When every mirrored file gets new bytes, and the user adds their own media/.gitignore
      const edited = new Map<string, string>()
      for (const [rel, id] of index) {
        const bytes = `edited ${rel}\n`
        await writeFile(w.file(`media/${rel}`), bytes)
        edited.set(id, bytes)
      }
      await writeFile(w.file('media/.gitignore'), '!keep-me\n')
      await writeFile(w.file('media/draft.tmp'), 'local junk, never uploaded\n')
      const before = await w.cli('--json', 'status')
      expect((before.json as { changes: { action: string }[] }).changes.map((c) => c.action)).toEqual(
        [...index.keys()].map(() => 'push'),
      )
      const push = await w.cli('--json', 'push')
      expect(push.exitCode, push.stderr).toBe(0) // push sends; reporting what a pull cannot take is pull's and status's
      expect((push.json as { applied: unknown[] }).applied).toHaveLength(index.size)
      // Then the same ids hold the new bytes under the names they had; the reserved items are untouched
      const serverAfter = await serverMedia()
      expect([...serverAfter.keys()].sort()).toEqual([...serverBefore.keys()].sort())
      for (const [key, [id, bytes]] of serverAfter) {
        expect(id, key).toBe(serverBefore.get(key)![0])
        expect(bytes, key).toBe(edited.get(id) ?? serverBefore.get(key)![1])
      }
      // And the next status is clean but for the reserved items; nothing outside the workspace changed
      const after = await w.cli('--json', 'status')
      expect((after.json as { changes: unknown[] }).changes).toEqual([])
      expect(await outsideNow()).toEqual(outsideBefore)
      await rm(scratch, { recursive: true })
      report(`hostile/media-checkout-names/${dialect}`, {
        reservedReportedAndKept: RESERVED.length,
        encodedAndRoundTripped: AWKWARD.length,
        junkLookingMirrored: JUNK_LOOKING.length,
        filesGitSees: committed.length,
        writtenOutsideWorkspace: 0,
      })
    })
  },
)
