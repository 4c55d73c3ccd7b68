// A team's everyday git workflow (docs/reliability.md "Everyday team workflow and odd trees"):
// one committed workspace, a bare origin and two clones, A and B, each with its own .cms-sync/.
// B edits, deletes, renames, moves media and changes schemas, in both orders (cms-sync push
// then git push, or git push first and A carries the change to the server); A runs `git pull`
// and every command. Real git, a real emulator per dialect, the real CLI in-process. Oracles
// after every step: no internal error, the server's items byte for byte the files of the clone
// that synced last (media: the bytes of each id at its path), both clones clean, and nothing
// written outside the clones.

import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { createMediaApi, type MediaApi } from '../../src/remote/media.js'
import { fileBytes, type JsonObject } from '../../src/workspace/codec.js'
import { contentCodec } from '../../src/workspace/content-codec.js'
import { parseMediaIndex } from '../../src/workspace/media-index.js'
import { schemaCodec } from '../../src/workspace/schema-codec.js'
import { type CliRun, SECTION_SCHEMA, startWorld, type World, writeConfig } from '../helpers/sync-world.js'
import { watchInProcess } from '../helpers/watch.js'
import { bytesUnder, filesUnder, report } from './support.js'

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
    cwd,
    stdio: 'pipe',
  }).toString()

const EXTRA_SCHEMA = {
  ...SECTION_SCHEMA,
  id: 'extra',
  name: 'Extra',
  fields: { properties: { note: { label: 'Note', schemaId: 'string', tabId: 'content' } } },
}

/** Text of a JSON file as a person writes it (cms-sync's canonical form is the same here). */
const jsonText = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

interface Team {
  w: World
  api: MediaApi
  /** The workspace folders of the two clones. */
  a: string
  b: string
  /** Every file beside the clones and the origin, to prove nothing was written outside them. */
  outside(): Promise<Map<string, string>>
}

describe.each(['spec', 'upstream'] as const)('two clones of one workspace (%s dialect)', (dialect) => {
  let world: World | undefined
  const figures = { scenarios: 0, cliRuns: 0, gitPulls: 0, internalErrors: 0, serverChecks: 0 }
  afterEach(async () => {
    await world?.close()
    world = undefined
  })

  async function cli(t: Team, dir: string, ...args: string[]): Promise<CliRun> {
    const run = await t.w.cliIn(dir, '--json', ...args)
    figures.cliRuns++
    if (/internal error/i.test(run.stderr + run.stdout)) figures.internalErrors++
    expect(run.stderr + run.stdout, `${path.basename(dir)}: ${args.join(' ')}`).not.toMatch(/internal error/i)
    return run
  }

  /** Runs a command that must succeed. */
  async function ok(t: Team, dir: string, ...args: string[]): Promise<CliRun> {
    const run = await cli(t, dir, ...args)
    expect(run.exitCode, `${path.basename(dir)}: ${args.join(' ')}: ${run.stderr}${run.stdout}`).toBe(0)
    return run
  }

  async function clean(t: Team, dir: string): Promise<void> {
    const status = await ok(t, dir, 'status')
    expect(status.json, `${path.basename(dir)} is clean`).toMatchObject({ clean: true, changes: [] })
  }

  /** Commits everything in the clone (the files and the lock a run rewrote) and pushes it. */
  function share(dir: string, message: string): void {
    git(dir, 'add', '-A')
    if (git(dir, 'status', '--porcelain').trim() !== '') git(dir, 'commit', '-qm', message)
    git(dir, 'push', '-q', 'origin', 'HEAD:main')
  }

  function pull(dir: string): void {
    git(dir, 'pull', '-q', '--no-rebase', 'origin', 'main')
    figures.gitPulls++
  }

  /**
   * The server's items byte for byte the clone's files: every content and schema the server
   * lists is the clone's file through the codec, every file has its item, and every media id of
   * media.yaml is on the server at that path with the file's bytes.
   */
  async function serverIsFilesOf(t: Team, dir: string): Promise<void> {
    figures.serverChecks++
    const files = await bytesUnder(dir, (rel) => rel.startsWith('.git') || rel.startsWith('.cms-sync'))
    const expected = new Map<string, string>()
    for (const [rel, bytes] of files)
      if (/^(content|schemas)\//.test(rel)) expected.set(rel, bytes.toString('utf8'))
    const actual = new Map<string, string>()
    for (const item of await t.w.server.list('content'))
      actual.set(`content/${item.id}.json`, fileBytes(contentCodec.toFile(item as JsonObject)).text)
    for (const item of await t.w.server.list('schema'))
      actual.set(`schemas/${item.id}.json`, fileBytes(schemaCodec.toFile(item as JsonObject)).text)
    expect(Object.fromEntries(actual), `the server holds the files of ${path.basename(dir)}`).toEqual(
      Object.fromEntries(expected),
    )
    const index = parseMediaIndex(files.get('media.yaml')?.toString('utf8') ?? '')
    const listed = new Map((await t.api.list()).map((m) => [m.id, m]))
    const onServer = [...listed.values()].map((m) => [m.folder, m.name].filter(Boolean).join('/')).sort()
    expect(onServer, 'media paths').toEqual([...index.keys()].sort())
    for (const [rel, id] of index) {
      const item = listed.get(id)
      expect(item, `media ${rel} (${id}) on the server`).toBeDefined()
      expect([item!.folder, item!.name].filter(Boolean).join('/')).toBe(rel)
      const served = Buffer.from(
        await (await fetch(`${t.w.emulator.url}/media/demo/live/${id}`)).arrayBuffer(),
      )
      expect(sha(served), `bytes of media/${rel}`).toBe(sha(files.get(`media/${rel}`)!))
    }
  }

  /** Both clones up to date with origin and clean, the server their files, nothing outside touched. */
  async function settled(t: Team, before: Map<string, string>): Promise<void> {
    pull(t.a)
    pull(t.b)
    await clean(t, t.a)
    await clean(t, t.b)
    await serverIsFilesOf(t, t.a)
    await serverIsFilesOf(t, t.b)
    expect(await t.outside(), 'nothing written outside the clones').toEqual(before)
    figures.scenarios++
  }

  async function team(): Promise<Team> {
    const w = await startWorld(dialect, {
      content: ['about', 'home', 'legal', 'news', 'shop'],
      resources: ['schemas', 'content', 'media'],
    })
    world = w
    await w.server.put('schema', 'extra', EXTRA_SCHEMA)
    const api = createMediaApi(w.server)
    const upload = path.join(w.root, '..', 'upload.bin')
    for (const [name, folder, text] of [
      ['logo.png', 'img', 'PNG logo bytes'],
      ['guide.pdf', 'docs', 'PDF guide bytes'],
    ] as const) {
      await writeFile(upload, text)
      const { id } = await api.upload({ path: upload, size: Buffer.byteLength(text), name })
      await api.move(id, folder)
    }
    await rm(upload)
    const base = path.dirname(w.root)
    const a = w.root
    const b = path.join(base, 'b')
    const origin = path.join(base, 'origin.git')
    await writeConfig(a, w.proxy.url, dialect, ['schemas', 'content', 'media'])
    const t: Team = {
      w,
      api,
      a,
      b,
      outside: () =>
        filesUnder(base, (rel) => [a, b, origin].some((dir) => rel.split('/')[0] === path.basename(dir))),
    }
    await ok(t, a, 'sync')
    await writeFile(path.join(a, '.gitignore'), '.cms-sync/\n')
    git(base, 'init', '-q', '--bare', '-b', 'main', origin)
    git(a, 'init', '-q', '-b', 'main')
    git(a, 'remote', 'add', 'origin', origin)
    share(a, 'the site')
    git(base, 'clone', '-q', origin, b)
    // B's first sync makes its own .cms-sync/ from the committed lock: nothing to do.
    const first = await ok(t, b, 'sync')
    expect(first.json.applied).toEqual([])
    await mkdir(path.join(base, 'sentinel'), { recursive: true })
    await writeFile(path.join(base, 'sentinel', 'notes.txt'), 'beside the clones\n')
    return t
  }

  async function editTitle(dir: string, rel: string, title: string): Promise<void> {
    const file = path.join(dir, rel)
    const value = JSON.parse(await readFile(file, 'utf8'))
    await writeFile(file, jsonText({ ...value, properties: { ...value.properties, title } }))
  }

  test("a teammate's deletes (content and a schema), pushed to the server then to git: every command after `git pull`", async () => {
    const t = await team()
    const before = await t.outside()
    // B deletes, carries it to the server, then commits and pushes to git
    await rm(path.join(t.b, 'content/legal.json'))
    await rm(path.join(t.b, 'schemas/extra.json'))
    await ok(t, t.b, 'push')
    share(t.b, 'drop legal and extra')
    // A pulls from git: its state still has both items, the lock no longer does
    pull(t.a)
    for (const command of ['status', 'pull', 'push', 'sync']) {
      const run = await ok(t, t.a, command)
      if (command !== 'status') expect(run.json, command).toMatchObject({ applied: [], failed: [] })
    }
    // And the daemon starts, reconciles and stops as usual
    const watching = watchInProcess(t.a, t.w.env)
    await watching.waitForEvent({ event: 'reconciled' }, 20_000)
    expect(await watching.stop(), watching.stderr()).toBe(0)
    expect(watching.stderr()).not.toMatch(/internal error/i)
    expect(await t.w.server.get('content', 'legal')).toBeUndefined()
    expect(await t.w.server.get('schema', 'extra')).toBeUndefined()
    await settled(t, before)
  })

  test("a teammate's delete and edit reach a clone under watch from the server, then by `git pull`", async () => {
    const t = await team()
    const before = await t.outside()
    // B: a delete and an edit, to the server, then to git
    await rm(path.join(t.b, 'content/legal.json'))
    await editTitle(t.b, 'content/home.json', 'home by B')
    await ok(t, t.b, 'push')
    share(t.b, 'B: drop legal, edit home')
    // A works under its own watch
    const watching = watchInProcess(t.a, t.w.env)
    await watching.waitForEvent({ event: 'reconciled' }, 20_000)
    // Watch brought B's server changes into A's files already: A commits them, then pulls
    git(t.a, 'add', '-A')
    git(t.a, 'commit', '-qm', 'what watch pulled')
    pull(t.a)
    const status = await ok(t, t.a, 'status')
    expect(status.json.changes).toEqual([])
    expect(watching.stderr()).not.toMatch(/internal error/i)
    expect(watching.events.filter((e) => e.event === 'error' || e.event === 'failed')).toEqual([])
    expect(await watching.stop(), watching.stderr()).toBe(0)
    expect(((await t.w.server.get('content', 'home'))!.properties as { title: string }).title).toBe(
      'home by B',
    )
    expect(await t.w.server.get('content', 'legal')).toBeUndefined()
    await settled(t, before)
  })

  test('a teammate deletes in git only: A carries the delete to the server after `git pull`', async () => {
    const t = await team()
    const before = await t.outside()
    git(t.b, 'rm', '-q', 'content/legal.json')
    share(t.b, 'drop legal')
    pull(t.a)
    const status = await ok(t, t.a, 'status')
    expect(status.json.changes).toMatchObject([{ path: 'content/legal.json', action: 'delete-remote' }])
    await ok(t, t.a, 'push')
    expect(await t.w.server.get('content', 'legal')).toBeUndefined()
    share(t.a, 'lock')
    await settled(t, before)
  })

  test("`.cms-sync/` restored from a backup older than the teammate's deletes, edits and moves", async () => {
    const t = await team()
    const before = await t.outside()
    const backup = path.join(t.a, '..', 'a-backup')
    await cp(path.join(t.a, '.cms-sync'), backup, { recursive: true })
    // B deletes one item, edits another, moves a media file; all to the server, then to git
    await rm(path.join(t.b, 'content/legal.json'))
    await editTitle(t.b, 'content/home.json', 'home by B')
    await mkdir(path.join(t.b, 'media/brand'), { recursive: true })
    await rename(path.join(t.b, 'media/img/logo.png'), path.join(t.b, 'media/brand/logo.png'))
    await ok(t, t.b, 'push')
    share(t.b, 'B: delete, edit, move')
    pull(t.a)
    await ok(t, t.a, 'sync')
    // A's disk is restored from last week's backup of .cms-sync/
    await rm(path.join(t.a, '.cms-sync'), { recursive: true })
    await cp(backup, path.join(t.a, '.cms-sync'), { recursive: true })
    await rm(backup, { recursive: true })
    for (const command of ['status', 'pull', 'push', 'sync']) await ok(t, t.a, command)
    expect(((await t.w.server.get('content', 'home'))!.properties as { title: string }).title).toBe(
      'home by B',
    )
    await settled(t, before)
  })

  test('edits: pushed by the teammate first, or carried to the server by the other clone', async () => {
    const t = await team()
    const before = await t.outside()
    // Order 1: B pushes to the server, then to git; A pulls from git
    await editTitle(t.b, 'content/home.json', 'home by B')
    await ok(t, t.b, 'push')
    share(t.b, 'home')
    pull(t.a)
    await clean(t, t.a)
    // Order 2: B commits and pushes to git only; A pulls from git and pushes to the server
    await editTitle(t.b, 'content/news.json', 'news by B')
    share(t.b, 'news')
    pull(t.a)
    const push = await ok(t, t.a, 'push')
    expect(push.json.applied).toMatchObject([{ path: 'content/news.json', action: 'push' }])
    share(t.a, 'lock after news')
    // Both at once, on items apart: each pushes to the server, A merges B's commit in git
    pull(t.b)
    await editTitle(t.a, 'content/about.json', 'about by A')
    await editTitle(t.b, 'content/shop.json', 'shop by B')
    await ok(t, t.b, 'sync')
    share(t.b, 'shop')
    await ok(t, t.a, 'sync')
    git(t.a, 'commit', '-qam', 'about')
    pull(t.a)
    await ok(t, t.a, 'sync')
    share(t.a, 'merged')
    await settled(t, before)
  })

  test('neighbouring items synced in both clones: a git conflict in cms-sync.lock, settled by the next sync', async () => {
    const t = await team()
    const before = await t.outside()
    // news and shop are neighbouring lines of the lock: git cannot merge the two changes
    await editTitle(t.a, 'content/news.json', 'news by A')
    await editTitle(t.b, 'content/shop.json', 'shop by B')
    await ok(t, t.a, 'push')
    await ok(t, t.b, 'push')
    share(t.b, 'shop')
    git(t.a, 'commit', '-qam', 'news')
    let conflicted = false
    try {
      pull(t.a)
    } catch {
      conflicted = true
    }
    expect(conflicted, 'git stops on the lock').toBe(true)
    expect(await readFile(path.join(t.a, 'cms-sync.lock'), 'utf8')).toMatch(/^<<<<<<< /m)
    // The lock's lines between the markers are no base: nothing to do, nothing in conflict
    const status = await ok(t, t.a, 'status')
    expect(status.json).toMatchObject({ clean: true, changes: [] })
    await ok(t, t.a, 'sync')
    expect(await readFile(path.join(t.a, 'cms-sync.lock'), 'utf8')).not.toMatch(/^(<<<<<<<|=======|>>>>>>>)/m)
    git(t.a, 'add', '-A')
    git(t.a, 'commit', '-qm', 'merge, the lock settled by cms-sync')
    share(t.a, 'merged')
    await settled(t, before)
  })

  test('renames: a content item under a new id, a media file moved, both orders', async () => {
    const t = await team()
    const before = await t.outside()
    // B renames news to press (a new id: the old item goes, the new comes) and moves the logo
    const news = JSON.parse(await readFile(path.join(t.b, 'content/news.json'), 'utf8'))
    await rm(path.join(t.b, 'content/news.json'))
    await writeFile(path.join(t.b, 'content/press.json'), jsonText({ ...news, id: 'press' }))
    await mkdir(path.join(t.b, 'media/brand'), { recursive: true })
    await rename(path.join(t.b, 'media/img/logo.png'), path.join(t.b, 'media/brand/logo.png'))
    await ok(t, t.b, 'push')
    share(t.b, 'news is press, the logo is brand')
    pull(t.a)
    await clean(t, t.a)
    // Order 2: B renames in git only (git mv of a media file, a content file given a new id)
    git(t.b, 'mv', 'media/docs/guide.pdf', 'media/guide.pdf')
    const shop = JSON.parse(await readFile(path.join(t.b, 'content/shop.json'), 'utf8'))
    git(t.b, 'rm', '-q', 'content/shop.json')
    await writeFile(path.join(t.b, 'content/store.json'), jsonText({ ...shop, id: 'store' }))
    share(t.b, 'guide to the root, shop is store')
    pull(t.a)
    const sync = await ok(t, t.a, 'sync')
    expect(
      sync.json.applied.map((i: { path: string; action: string }) => `${i.action} ${i.path}`).sort(),
    ).toEqual(['delete-remote content/shop.json', 'push content/store.json', 'push media/guide.pdf'])
    share(t.a, 'lock after the renames')
    await settled(t, before)
  })

  test('schema changes: a field added and a schema deleted with its content, both orders', async () => {
    const t = await team()
    const before = await t.outside()
    const withSubtitle = (schema: typeof SECTION_SCHEMA) => ({
      ...schema,
      fields: {
        properties: {
          ...schema.fields.properties,
          subtitle: { label: 'Subtitle', schemaId: 'string', tabId: 'content' },
        },
      },
    })
    // Order 1: B adds a field and uses it, pushes to the server, then to git
    const sectionFile = path.join(t.b, 'schemas/section.json')
    await writeFile(sectionFile, jsonText(withSubtitle(JSON.parse(await readFile(sectionFile, 'utf8')))))
    const home = JSON.parse(await readFile(path.join(t.b, 'content/home.json'), 'utf8'))
    await writeFile(
      path.join(t.b, 'content/home.json'),
      jsonText({ ...home, properties: { ...home.properties, subtitle: 'welcome' } }),
    )
    await ok(t, t.b, 'push')
    share(t.b, 'subtitle')
    pull(t.a)
    await clean(t, t.a)
    // Order 2: B moves legal to the extra schema and deletes extra again, in git only
    const legal = JSON.parse(await readFile(path.join(t.b, 'content/legal.json'), 'utf8'))
    await writeFile(path.join(t.b, 'content/legal.json'), jsonText({ ...legal, schemaId: 'extra' }))
    share(t.b, 'legal is extra')
    pull(t.a)
    await ok(t, t.a, 'push')
    share(t.a, 'lock')
    pull(t.b)
    git(t.b, 'rm', '-q', 'content/legal.json', 'schemas/extra.json')
    share(t.b, 'no more extra')
    pull(t.a)
    const push = await ok(t, t.a, 'push')
    expect(push.json.applied.map((i: { path: string }) => i.path).sort()).toEqual([
      'content/legal.json',
      'schemas/extra.json',
    ])
    share(t.a, 'lock')
    await settled(t, before)
  })

  test('report', () => {
    report(`two-clones/${dialect}`, figures)
  })
})

function sha(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex')
}
