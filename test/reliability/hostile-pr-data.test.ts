// A hostile pull request, through committed data (docs/reliability.md "Hostile pull request:
// committed data"): in a CI run on a pull request every committed file may be written by an
// attacker: cms-sync.lock, media.yaml, file names, the JSON files themselves. Each scenario
// commits a synced workspace to a real git repository, makes the pull request's commit in a
// clone of it (a CI checkout: no .cms-sync/), and runs the built CLI there as its own process
// with a real token against the emulator. The oracles: the server's items byte for byte as they
// should be, nothing written outside the workspace, no internal error.

import { execFileSync } from 'node:child_process'
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { createMediaApi } from '../../src/remote/media.js'
import { createConnectionCodec } from '../../src/workspace/connection-codec.js'
import { contentCodec } from '../../src/workspace/content-codec.js'
import { contentFile, gitConnection } from '../helpers/fixtures.js'
import { syncedWorld, type World, writeConfig } from '../helpers/sync-world.js'
import { runCli } from './processes.js'
import { contentHash, filesUnder, report, sentinelAround } from './support.js'

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
    cwd,
    stdio: 'pipe',
  }).toString()

const FORM = { title: 'Contact', allowedOrigin: '', redirect: '', appendRedirect: false, inputs: {} }

/** The synced workspace committed to git, and a CI checkout of it (a clone: no .cms-sync/). */
async function committedAndCloned(w: World): Promise<string> {
  await writeFile(w.file('.gitignore'), '.cms-sync/\n')
  git(w.root, 'init', '-q', '-b', 'main')
  git(w.root, 'add', '.')
  git(w.root, 'commit', '-qm', 'site')
  // In a folder of its own: the sentinel files beside it are all that is there (sentinelAround).
  const clone = path.join(w.root, '..', 'pr', 'ci')
  await mkdir(path.dirname(clone), { recursive: true })
  git(path.dirname(clone), 'clone', '-q', w.root, clone)
  outsideOf.set(clone, await sentinelAround(clone))
  return clone
}

/** Per CI checkout: every file beside it (sentinel files), to prove each run wrote nothing there. */
const outsideOf = new Map<string, () => Promise<Map<string, string>>>()

/** The pull request's commit: whatever it changed in the clone, committed as history. */
function commitPr(clone: string, message = 'pull request'): void {
  git(clone, 'add', '-A')
  git(clone, 'commit', '-qm', message)
}

/** The built CLI in the CI checkout, as its own process with the real token. */
async function ci(w: World, clone: string, ...args: string[]) {
  const outside = outsideOf.get(clone)
  const before = await outside?.()
  const run = await runCli(['-C', clone, ...args], w.env).done
  const said = run.stdout + run.stderr
  expect(said, said).not.toMatch(/internal error/)
  if (outside) expect(await outside(), `written beside ${clone}`).toEqual(before)
  // biome-ignore lint/suspicious/noExplicitAny: the parsed --json document, read by each test
  let json: any
  try {
    json = JSON.parse(run.stdout)
  } catch {
    json = undefined
  }
  return { ...run, said, json }
}

async function lockLines(dir: string): Promise<string[]> {
  return (await readFile(path.join(dir, 'cms-sync.lock'), 'utf8')).trimEnd().split('\n')
}

/** Rewrites one item's line of the lock in `dir`. */
async function forgeLockLine(dir: string, rel: string, change: Record<string, unknown>): Promise<void> {
  const lines = await lockLines(dir)
  const at = lines.findIndex((line) => line.startsWith(`{"path":${JSON.stringify(rel)}`))
  expect(at, `a lock line for ${rel}`).toBeGreaterThan(0)
  lines[at] = JSON.stringify({ ...JSON.parse(lines[at]!), ...change })
  await writeFile(path.join(dir, 'cms-sync.lock'), `${lines.join('\n')}\n`)
}

async function editTitle(dir: string, rel: string, title: string): Promise<void> {
  const file = path.join(dir, rel)
  const value = JSON.parse(await readFile(file, 'utf8'))
  await writeFile(file, `${JSON.stringify({ ...value, properties: { title } }, null, 2)}\n`)
}

/** Every item of the kinds a scenario touches, exactly as the server holds it (dates included). */
/** An editor's change to `id` on the server after the commit, and the pull request's to its file. */
async function editedOnBothSides(w: World, clone: string, id: string): Promise<Record<string, unknown>> {
  await w.setContent(id, { properties: { title: 'editor' } })
  const current = (await w.server.get('content', id))!
  await editTitle(clone, `content/${id}.json`, 'pull request')
  return current
}

/** The pull request adds media/new.png and gives it logo.png's id in media.yaml. */
async function logoIdOnANewFile(clone: string): Promise<void> {
  await writeFile(path.join(clone, 'media', 'new.png'), "the attacker's bytes\n")
  const index = path.join(clone, 'media.yaml')
  await writeFile(index, (await readFile(index, 'utf8')).replace('logo.png:', 'new.png:'))
}

async function serverItems(w: World): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  for (const kind of ['schema', 'content', 'form'] as const)
    for (const item of await w.server.list(kind)) out[`${kind}:${String(item.id)}`] = item
  return out
}

async function trashFiles(dir: string): Promise<string[]> {
  const trash = path.join(dir, '.cms-sync', 'trash')
  const found: string[] = []
  for (const run of await readdir(trash).catch(() => [] as string[]))
    for (const rel of (await filesUnder(path.join(trash, run))).keys()) found.push(`${run}/${rel}`)
  return found
}

/** Every media item as the server holds it: path -> id, name, folder and sha256 of the bytes downloaded. */
async function serverMedia(w: World): Promise<Record<string, unknown>> {
  const api = createMediaApi(w.server)
  const scratch = path.join(w.root, '..', 'downloads')
  await mkdir(scratch, { recursive: true })
  const out: Record<string, unknown> = {}
  for (const item of await api.list()) {
    const { sha256 } = await api.download(item.id, path.join(scratch, 'bytes'))
    out[item.id] = { name: item.name, folder: item.folder, sha256, updateDate: item.updateDate }
  }
  return out
}

/** A synced workspace with two media files on the server, logo.png and icon.png, committed and cloned. */
async function withMedia(w: World): Promise<{ clone: string; ids: Record<string, string> }> {
  await writeConfig(w.root, w.proxy.url, w.emulator.dialect, ['schemas', 'content', 'media'])
  const api = createMediaApi(w.server)
  const scratch = path.join(w.root, '..', 'uploads')
  await mkdir(scratch, { recursive: true })
  for (const name of ['logo.png', 'icon.png']) {
    const file = path.join(scratch, name)
    await writeFile(file, `the bytes of ${name}\n`)
    await api.upload({ path: file, size: (await readFile(file)).length, name })
  }
  const first = await w.cli('sync')
  expect(first.exitCode, first.stderr + first.stdout).toBe(0)
  const ids: Record<string, string> = {}
  for (const line of (await readFile(w.file('media.yaml'), 'utf8')).split('\n')) {
    const m = /^([^#][^:]*): (\S+)$/.exec(line)
    if (m) ids[m[1]!] = m[2]!
  }
  expect(Object.keys(ids).sort()).toEqual(['icon.png', 'logo.png'])
  return { clone: await committedAndCloned(w), ids }
}

describe.each(['spec', 'upstream'] as const)(
  'hostile pull request: committed data (%s dialect)',
  (dialect) => {
    let world: World | undefined
    afterEach(async () => {
      await world?.close()
      world = undefined
    })

    async function started(): Promise<World> {
      world = await syncedWorld(dialect)
      return world
    }

    test('lock lines for items no commit ever held, with widened resources and limits, delete nothing on the server', async () => {
      const w = await started()
      for (const id of ['f-1', 'f-2', 'f-3']) await w.server.put('form', id, { ...FORM, id, title: id })
      const clone = await committedAndCloned(w)
      // The attacker learns each item's lock line from a workspace of their own (the server's
      // anonymous reads give as much) ...
      await w.server.put('content', 'secret', {
        ...((await w.server.get('content', 'home')) as object),
        id: 'secret',
        properties: { title: 'never in the repository' },
      })
      const scout = path.join(w.root, '..', 'scout')
      await mkdir(scout)
      await writeConfig(scout, w.proxy.url, dialect, ['content', 'forms'])
      expect((await w.cliIn(scout, 'pull')).exitCode).toBe(0)
      const stolen = (await lockLines(scout)).filter((line) => /"path":"(forms\/|content\/secret)/.test(line))
      expect(stolen).toHaveLength(4)
      // ... and the pull request widens what is synced, lifts the limits and adds those lines,
      // with no file: each reads as "deleted in git".
      await writeFile(
        path.join(clone, 'cms-sync.yaml'),
        (await readFile(path.join(clone, 'cms-sync.yaml'), 'utf8'))
          .replace(/resources: \[.*\]/, 'resources: [schemas, content, forms]')
          .concat('safety: { maxDeletePercent: 100, maxDeletes: 1000 }\n'),
      )
      const lines = await lockLines(clone)
      const items = [...lines.slice(2), ...stolen].sort()
      await writeFile(path.join(clone, 'cms-sync.lock'), `${[...lines.slice(0, 2), ...items].join('\n')}\n`)
      commitPr(clone)
      const before = await serverItems(w)

      for (const command of ['status', 'sync']) {
        const run = await ci(w, clone, '--json', command)
        expect(run.code, run.said).toBe(0)
        expect(JSON.stringify(run.json), run.said).not.toMatch(/delete-remote/)
      }
      // Then every item is still on the server, byte for byte
      expect(await serverItems(w)).toEqual(before)
      // And what the lock named came down as files (no base: the server's side is taken as new)
      expect(JSON.parse(await readFile(path.join(clone, 'forms', 'f-1.json'), 'utf8')).title).toBe('f-1')
      report(`hostile-pr/lock-lines-never-committed/${dialect}`, { forgedLines: 4, deletedOnServer: 0 })
    })

    test('a lock rev forged to the server current value does not push over an editor change', async () => {
      const w = await started()
      const clone = await committedAndCloned(w)
      // An editor changes the page on the server after the commit, and the pull request edits it
      const current = await editedOnBothSides(w, clone, 'home')
      // The pull request moves the lock's revision to the server's current one
      // (the server's anonymous reads give what it is made of)
      await forgeLockLine(clone, 'content/home.json', { rev: contentCodec.revisionOf(current) })
      commitPr(clone)
      const before = await serverItems(w)

      const run = await ci(w, clone, '--json', 'push')
      // Then the editor's change stays: a conflict, nothing written
      expect(run.code, run.said).toBe(3)
      expect(run.json.conflicts).toMatchObject([{ path: 'content/home.json' }])
      expect(await serverItems(w)).toEqual(before)
      report(`hostile-pr/forged-rev/${dialect}`, { overwritten: 0 })
    })

    test('a connection whose lock rev is forged to the server current value is not pushed over an editor change', async () => {
      const w = await started()
      w.extraEnv.CMS_SYNC_SECRET_SITE_DEPLOYER_PASSWORD = 'deploy-s3cret'
      await w.server.put('connection', 'site', gitConnection('deploy-s3cret'))
      await writeConfig(w.root, w.proxy.url, dialect, ['schemas', 'content', 'connections'])
      expect((await w.cli('sync')).exitCode).toBe(0)
      const clone = await committedAndCloned(w)
      // An editor moves the deployment to another branch; the pull request renames the connection
      // and sets the lock's revision to the server's current one (the hash of its masked form)
      const current = (await w.server.get('connection', 'site'))!
      await w.server.put('connection', 'site', {
        ...current,
        deployer: { ...(current.deployer as object), branch: 'live' },
      })
      const edited = (await w.server.get('connection', 'site'))!
      const file = path.join(clone, 'connections', 'site.json')
      await writeFile(
        file,
        `${JSON.stringify({ ...JSON.parse(await readFile(file, 'utf8')), title: 'pull request' }, null, 2)}\n`,
      )
      await forgeLockLine(clone, 'connections/site.json', {
        rev: createConnectionCodec({ env: {} }).revisionOf(edited),
      })
      commitPr(clone)
      const before = await w.server.get('connection', 'site')

      const run = await ci(w, clone, '--json', 'push')
      expect(run.code, run.said).toBe(3)
      expect(run.json.conflicts, run.said).toMatchObject([{ path: 'connections/site.json' }])
      expect(await w.server.get('connection', 'site')).toEqual(before)
      report(`hostile-pr/forged-rev-connection/${dialect}`, { overwritten: 0 })
    })

    test('a lock line forged to the server current hash and rev, held by no commit, is no base: a conflict', async () => {
      const w = await started()
      const clone = await committedAndCloned(w)
      const current = await editedOnBothSides(w, clone, 'news')
      await forgeLockLine(clone, 'content/news.json', {
        hash: contentHash(current),
        rev: contentCodec.revisionOf(current),
      })
      commitPr(clone)
      const before = await serverItems(w)

      for (const command of ['push', 'sync']) {
        const run = await ci(w, clone, '--json', command)
        expect(run.code, run.said).toBe(3)
        expect(run.json.conflicts, run.said).toMatchObject([{ path: 'content/news.json' }])
        expect(run.said).toMatch(/no commit of content\/news.json holds the base cms-sync.lock gives it/)
      }
      expect(await serverItems(w)).toEqual(before)
      report(`hostile-pr/forged-hash-and-rev/${dialect}`, { overwritten: 0 })
    })

    test('a duplicate JSON key is refused with file:line:col; the rest of the run goes on', async () => {
      const w = await started()
      const clone = await committedAndCloned(w)
      // The reviewer reads the first "properties"; JSON.parse keeps the second
      const home = contentFile('home', { properties: { title: 'reviewed' } })
      const text = JSON.stringify(home, null, 2).replace(
        /\n}$/,
        ',\n  "properties": {\n    "title": "not what was reviewed"\n  }\n}\n',
      )
      await writeFile(path.join(clone, 'content', 'home.json'), text)
      // Nested, and spelled with an escape: still the same key twice
      const news = contentFile('news', { properties: { title: 'news' } })
      await writeFile(
        path.join(clone, 'content', 'news.json'),
        JSON.stringify(news, null, 2).replace('"title": "news"', '"title": "news",\n    "\\u0074itle": "x"'),
      )
      await editTitle(clone, 'content/contact.json', 'a good edit')
      commitPr(clone)
      const before = await serverItems(w)

      const run = await ci(w, clone, 'push')
      expect(run.code, run.said).toBe(1)
      const homeLine = text.split('\n').lastIndexOf('  "properties": {') + 1
      expect(run.said).toContain(`content/home.json:${homeLine}:3: the key "properties" appears twice`)
      expect(run.said).toMatch(/content\/news.json:\d+:5: the key "title" appears twice/)
      // Then neither reached the server, and the good edit did
      const after = await serverItems(w)
      expect(after['content:home']).toEqual(before['content:home'])
      expect(after['content:news']).toEqual(before['content:news'])
      expect((after['content:contact'] as { properties: unknown }).properties).toEqual({
        title: 'a good edit',
      })
      report(`hostile-pr/duplicate-keys/${dialect}`, { filesWithDuplicates: 2, reachedServer: 0 })
    })

    test('file names with newlines and escape sequences are printed escaped: no workflow command, no hidden line', async () => {
      const w = await started()
      const clone = await committedAndCloned(w)
      // Each name starts a line GitHub Actions reads as a command, or steers the terminal (and is
      // no encoded id: every command names it)
      const names = [
        'evil\n::error title=pwned::owned\u001b[2K',
        'x\r::add-mask::hidden',
        'rlo\u202etxt.nosj%zz',
        'bell\u0007\u009b31m',
      ]
      for (const name of names)
        await writeFile(
          path.join(clone, 'content', `${name}.json`),
          JSON.stringify(contentFile(name), null, 2),
        )
      await symlink('/etc/passwd\n::error::linked', path.join(clone, 'content', 'link\n::warning::x.json'))
      commitPr(clone)
      const before = await serverItems(w)

      for (const args of [['status'], ['push'], ['sync'], ['push', '--dry-run'], ['-v', 'status']]) {
        const run = await ci(w, clone, ...args)
        // Each such file is an item that fails
        expect(run.code, run.said).toBe(1)
        // Then no line starts with a workflow command, and no control character reaches the output
        for (const line of run.said.split('\n')) expect(line, args[0]).not.toMatch(/^\s*::/)
        expect(run.said, args[0]).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/)
        // And the names are there, escaped
        expect(run.said, args[0]).toContain('content/evil\\n::error title=pwned::owned\\u001b[2K.json')
        expect(run.said, args[0]).toContain('content/rlo\\u202etxt.nosj%zz.json')
      }
      // --json keeps the names as they are (JSON escapes them)
      const json = await ci(w, clone, '--json', 'status')
      const paths = JSON.stringify(json.json)
      for (const name of names) expect(paths).toContain(JSON.stringify(`content/${name}.json`).slice(1, -1))
      expect(await serverItems(w)).toEqual(before)
      report(`hostile-pr/output-injection/${dialect}`, { names: names.length + 1, commandsChecked: 6 })
    })

    test("media.yaml pointing an id at a new file, while the id's file is still there, is refused", async () => {
      const w = await started()
      const { clone, ids } = await withMedia(w)
      // The pull request adds a file and gives it logo.png's id; logo.png stays as it is
      await logoIdOnANewFile(clone)
      commitPr(clone)
      const before = await serverMedia(w)

      for (const command of ['status', 'push', 'sync']) {
        const run = await ci(w, clone, command)
        // Then the run stops, naming media.yaml, the id and both paths; the server keeps its bytes
        expect(run.code, run.said).toBe(2)
        expect(run.stderr).toContain('media.yaml')
        expect(run.stderr).toContain(ids['logo.png'])
        expect(run.stderr).toContain('media/logo.png')
        expect(run.stderr).toContain('media/new.png')
      }
      expect(await serverMedia(w)).toEqual(before)
      report(`hostile-pr/media-id-remapped/${dialect}`, { overwritten: 0 })
    })

    test('media.yaml swapping two ids is refused', async () => {
      const w = await started()
      const { clone, ids } = await withMedia(w)
      await writeFile(
        path.join(clone, 'media.yaml'),
        (await readFile(path.join(clone, 'media.yaml'), 'utf8'))
          .replace(`logo.png: ${ids['logo.png']}`, 'logo.png: SWAP')
          .replace(`icon.png: ${ids['icon.png']}`, `icon.png: ${ids['logo.png']}`)
          .replace('logo.png: SWAP', `logo.png: ${ids['icon.png']}`),
      )
      commitPr(clone)
      const before = await serverMedia(w)

      const run = await ci(w, clone, 'sync')
      expect(run.code, run.said).toBe(2)
      expect(run.stderr).toContain(ids['logo.png'])
      expect(run.stderr).toContain(ids['icon.png'])
      expect(await serverMedia(w)).toEqual(before)
      report(`hostile-pr/media-ids-swapped/${dialect}`, { overwritten: 0 })
    })

    test('a media lock line moved with media.yaml onto a new file, held by no commit, overwrites nothing', async () => {
      const w = await started()
      const { clone, ids } = await withMedia(w)
      // The pull request moves logo.png's id, in media.yaml and in the lock, onto a new file, and
      // keeps the lock's hash (logo.png's bytes, which the server holds): no file moved in git
      await logoIdOnANewFile(clone)
      const lines = await lockLines(clone)
      const moved = lines.map((line) =>
        line.startsWith('{"path":"media/logo.png"') ? line.replace('media/logo.png', 'media/new.png') : line,
      )
      await writeFile(
        path.join(clone, 'cms-sync.lock'),
        `${[...moved.slice(0, 2), ...moved.slice(2).sort()].join('\n')}\n`,
      )
      commitPr(clone)
      const before = await serverMedia(w)

      const run = await ci(w, clone, '--json', 'push')
      // Then logo.png's item keeps its bytes and name: a conflict, said why
      expect(run.code, run.said).toBe(3)
      expect(run.json.conflicts, run.said).toMatchObject([{ path: 'media/new.png' }])
      expect(run.said).toMatch(/no commit of media\/new.png holds the base cms-sync.lock gives it/)
      const after = await serverMedia(w)
      expect(after[ids['logo.png']!]).toEqual(before[ids['logo.png']!])
      expect(after[ids['icon.png']!]).toEqual(before[ids['icon.png']!])
      report(`hostile-pr/media-lock-line-moved/${dialect}`, { overwritten: 0 })
    })

    test('a forged lock line pulled into a workspace with local state does not push over an editor change', async () => {
      const w = await started()
      await committedAndCloned(w)
      // An editor changes the page; a commit pulled from a teammate's branch says the server's
      // copy is the base (hash and revision of what the server holds), which no commit held
      await w.setContent('home', { properties: { title: 'editor' } })
      const current = (await w.server.get('content', 'home'))!
      await forgeLockLine(w.root, 'content/home.json', {
        hash: contentHash(current),
        rev: contentCodec.revisionOf(current),
      })
      commitPr(w.root, "a teammate's commit")
      // The developer edits the page too
      await editTitle(w.root, 'content/home.json', 'developer')
      const before = await serverItems(w)

      const run = await ci(w, w.root, '--json', 'push')
      expect(run.code, run.said).toBe(3)
      expect(run.json.conflicts, run.said).toMatchObject([{ path: 'content/home.json' }])
      expect(await serverItems(w)).toEqual(before)
      report(`hostile-pr/forged-line-over-local-state/${dialect}`, { overwritten: 0 })
    })

    test('every item deleted on the server is kept first in .cms-sync/trash/ and named in the output', async () => {
      const w = await started()
      const clone = await committedAndCloned(w)
      const shop = (await w.server.get('content', 'shop'))!
      await rm(path.join(clone, 'content', 'shop.json'))
      commitPr(clone, 'remove the shop')

      const run = await ci(w, clone, 'push')
      expect(run.code, run.said).toBe(0)
      expect(await w.server.get('content', 'shop')).toBeUndefined()
      // Then the server's copy is in trash, and the output says where
      const kept = (await trashFiles(clone)).filter((rel) => rel.endsWith('content/shop.json.remote'))
      expect(kept).toHaveLength(1)
      const copy = JSON.parse(await readFile(path.join(clone, '.cms-sync', 'trash', kept[0]!), 'utf8'))
      expect(copy).toEqual(contentFile('shop', { properties: (shop as { properties: unknown }).properties }))
      expect(run.stdout).toContain(`.cms-sync/trash/${kept[0]}`)
      report(`hostile-pr/deletes-kept/${dialect}`, { deleted: 1, keptInTrash: kept.length })
    })
  },
)
