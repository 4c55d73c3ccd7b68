// The media matcher and planner without fs or http: which file is which id, and what each
// combination of base, local and remote becomes.

import { describe, expect, test } from 'vitest'
import {
  localRelOf,
  type MediaBaseItem,
  matchMedia,
  serverPlaceOf,
} from '../../src/engine/media/media-match.js'
import { planMedia } from '../../src/engine/media/media-plan.js'
import type { RemoteMedia } from '../../src/remote/media.js'
import type { LocalMediaFile } from '../../src/workspace/media-scan.js'

const STAT = { size: 1, mtimeMs: 1, ino: 1 }
const file = (rel: string, sha256: string): LocalMediaFile => ({ rel, sha256, size: 1, stat: STAT })
const remote = (id: string, folder: string, name: string, updateDate: string | null = 'r1'): RemoteMedia => ({
  id,
  folder,
  name,
  updateDate,
})
const base = (
  id: string,
  rel: string,
  sha256: string,
  name: string,
  folder: string,
  rev = 'r1',
): MediaBaseItem => ({
  id,
  rel,
  sha256,
  name,
  folder,
  rev,
})

function run(opts: {
  base?: MediaBaseItem[]
  index?: Record<string, string>
  files?: LocalMediaFile[]
  remote?: RemoteMedia[]
  checksum?: boolean
}) {
  const b = new Map((opts.base ?? []).map((i) => [i.id, i]))
  const match = matchMedia({
    base: b,
    index: opts.index ? new Map(Object.entries(opts.index)) : undefined,
    files: new Map((opts.files ?? []).map((f) => [f.rel, f])),
    remote: opts.remote ?? [],
    checksum: opts.checksum ?? false,
  })
  return { match, items: planMedia(match, b, {}) }
}

describe('media plan', () => {
  const synced = base('m1', 'img/a.png', 'A', 'a.png', 'img')

  test('unchanged: nothing to do, and no download', () => {
    const { items, match } = run({
      base: [synced],
      index: { 'img/a.png': 'm1' },
      files: [file('img/a.png', 'A')],
      remote: [remote('m1', 'img', 'a.png')],
    })
    expect(items).toMatchObject([{ id: 'm1', action: 'none' }])
    expect(match.needBytes).toEqual([])
  })

  test('moved and renamed locally (media.yaml not edited): the same id is pushed from its old path', () => {
    const { items } = run({
      base: [synced],
      index: { 'img/a.png': 'm1' },
      files: [file('other/b.png', 'A')],
      remote: [remote('m1', 'img', 'a.png')],
    })
    expect(items).toMatchObject([
      { id: 'm1', path: 'media/other/b.png', from: 'media/img/a.png', action: 'push', local: 'modified' },
    ])
  })

  test('renamed on the server: pulled as a move of the same file', () => {
    const { items, match } = run({
      base: [synced],
      index: { 'img/a.png': 'm1' },
      files: [file('img/a.png', 'A')],
      remote: [remote('m1', 'img', 'b.png', 'r1')],
    })
    expect(items).toMatchObject([{ id: 'm1', path: 'media/img/b.png', action: 'pull', remote: 'modified' }])
    expect(match.needBytes).toEqual([])
  })

  test('a name the server rewrote on upload maps back to the local path: no echo', () => {
    const rewritten = base('m2', 'Docs/My File.PDF', 'D', 'my-file.PDF', 'Docs', '')
    const { items } = run({
      base: [rewritten],
      index: { 'Docs/My File.PDF': 'm2' },
      files: [file('Docs/My File.PDF', 'D')],
      remote: [remote('m2', 'Docs', 'my-file.PDF', null)],
    })
    expect(items).toMatchObject([{ action: 'none' }])
  })

  test('spec: a new updateDate means the bytes must be compared (download) when the file exists', () => {
    const { match } = run({
      base: [synced],
      index: { 'img/a.png': 'm1' },
      files: [file('img/a.png', 'B')],
      remote: [remote('m1', 'img', 'a.png', 'r2')],
    })
    expect(match.needBytes).toEqual(['m1'])
  })

  test('upstream: without --checksum unchanged name and folder count as unchanged bytes; with it, they are compared', () => {
    const up = base('m1', 'a.png', 'A', 'a.png', '', '')
    const listing = [remote('m1', '', 'a.png', null)]
    expect(run({ base: [up], files: [file('a.png', 'A')], remote: listing }).match.needBytes).toEqual([])
    expect(
      run({ base: [up], files: [file('a.png', 'A')], remote: listing, checksum: true }).match.needBytes,
    ).toEqual(['m1'])
  })

  test('a new local file is pushed without an id; a new server item is pulled to folder/name', () => {
    const { items } = run({ files: [file('new.txt', 'N')], remote: [remote('s1', 'x/y', 'z.txt')] })
    expect(items).toMatchObject([
      { id: '', path: 'media/new.txt', action: 'push', local: 'added' },
      { id: 's1', path: 'media/x/y/z.txt', action: 'pull', remote: 'added' },
    ])
  })

  test('two server items with one folder and name: the second gets its id in its file name', () => {
    const { items } = run({ remote: [remote('aa', 'p', 'x.png'), remote('bb', 'p', 'x.png')] })
    expect(items.map((i) => i.path).sort()).toEqual(['media/p/x.png', 'media/p/x~bb.png'])
  })

  test('a second item whose id is no plain name gets a hash of it, never the id as a path', () => {
    const { items } = run({
      remote: [remote('aa', 'p', 'x.png'), remote('../../../up', 'p', 'x.png'), remote('a/b', 'p', 'x.png')],
    })
    const paths = items.map((i) => i.path)
    expect(paths).toHaveLength(3)
    for (const p of paths) expect(p).toMatch(/^media\/p\/x(~aa|~[0-9a-f]{16})?\.png$/)
    expect(new Set(paths).size).toBe(3)
  })

  test('a server name no file can hold is reported, not mirrored', () => {
    const { items, match } = run({
      remote: [remote('aa', '', '..'), remote('bb', 'a', 'x\\y'), remote('cc', '', 'a\nb')],
    })
    expect(items).toEqual([])
    expect(match.problems.map((p) => p.id)).toEqual(['aa', 'bb', 'cc'])
  })

  test('names git or cms-sync read (.gitignore, .git, ... in any folder and case) are reported and held on every side', () => {
    const reserved = [
      remote('g1', '', '.gitignore'),
      remote('g2', 'img', '.GitAttributes'),
      remote('g3', '.git', 'config'),
      remote('g4', 'a/b', '.cmsyncignore'),
      remote('g5', 'GIT~1', 'HEAD'),
      remote('g6', '', '.gitmodules'),
    ]
    // g1 was mirrored by an older version: its file and base stay, and nothing deletes it
    const { items, match } = run({
      base: [base('g1', '.gitignore', 'S', '.gitignore', '')],
      index: { '.gitignore': 'g1' },
      files: [file('.gitignore', 'S')],
      remote: reserved,
    })
    expect(items).toEqual([])
    expect(match.problems.map((p) => p.id).sort()).toEqual(['g1', 'g2', 'g3', 'g4', 'g5', 'g6'])
    for (const p of match.problems) expect(p.problem).toMatch(/not mirrored: .*git or cms-sync reads/)
  })

  test('names Windows or macOS cannot hold are encoded reversibly, one path part at a time', () => {
    const nfd = 'cafe\u0301.png'
    const { items } = run({
      remote: [
        remote('w1', '', 'a:b?c*.png'),
        remote('w2', 'q<>|', 'x".txt'),
        remote('w3', '', 'dot.'),
        remote('w4', 'trail ', 'space '),
        remote('w5', '', 'CON'),
        remote('w6', 'aux', 'nul.txt'),
        remote('w7', '', '100%.png'),
        remote('w8', '', 'caf\u00e9.png'),
        remote('w9', '', nfd),
      ],
    })
    expect(Object.fromEntries(items.map((i) => [i.id, i.path]))).toEqual({
      w1: 'media/a%3Ab%3Fc%2A.png',
      w2: 'media/q%3C%3E%7C/x%22.txt',
      w3: 'media/dot%2E',
      w4: 'media/trail%20/space%20',
      w5: 'media/%43ON',
      w6: 'media/%61ux/%6Eul.txt',
      w7: 'media/100%25.png',
      w8: 'media/caf\u00e9.png',
      w9: 'media/cafe%CC%81.png',
    })
    for (const item of items) expect(item.action).toBe('pull')
  })

  test('a file path maps back to the server folder and name it was written for; a hand-made name stands for itself', () => {
    for (const [folder, name] of [
      ['', 'a:b?.png'],
      ['aux', 'nul.txt'],
      ['q<>', 'cafe\u0301.txt'],
      ['x/y', '100%.png'],
    ] as const)
      expect(serverPlaceOf(localRelOf(folder, name))).toEqual({ folder, name })
    expect(serverPlaceOf('raw/100%.png')).toEqual({ folder: 'raw', name: '100%.png' })
  })

  test('two server names that differ only in case or Unicode spelling get files that differ on every platform', () => {
    const { items } = run({
      remote: [remote('h1', 'p', 'Home.png'), remote('h2', 'p', 'home.png'), remote('h3', 'P', 'HOME.png')],
    })
    const paths = items.map((i) => i.path).sort()
    expect(paths).toEqual(['media/p/HOME~h3.png', 'media/p/Home.png', 'media/p/home~h2.png'])
    expect(new Set(paths.map((p) => p.toLowerCase())).size).toBe(3)
  })

  test('server folders that differ only in case share the spelling first in use, so a checkout elsewhere sees no move', () => {
    const { items } = run({
      base: [base('m1', 'Img/a.png', 'A', 'a.png', 'Img')],
      index: { 'Img/a.png': 'm1' },
      files: [file('Img/a.png', 'A')],
      remote: [
        remote('m1', 'Img', 'a.png'),
        remote('b1', 'img', 'b.png'),
        remote('c1', 'IMG/Sub', 'c.png'),
        remote('d1', 'img/sub', 'd.png'),
        remote('e1', 'img', 'A.png'),
      ],
    })
    expect(Object.fromEntries(items.map((i) => [i.id, i.path]))).toEqual({
      m1: 'media/Img/a.png',
      b1: 'media/Img/b.png',
      c1: 'media/Img/Sub/c.png',
      d1: 'media/Img/Sub/d.png',
      e1: 'media/Img/A~e1.png',
    })
  })

  test('a server item whose name folds onto a synced file gets its own file; the synced one keeps its path', () => {
    const { items } = run({
      base: [base('m1', 'img/a.png', 'A', 'a.png', 'img')],
      index: { 'img/a.png': 'm1' },
      files: [file('img/a.png', 'A')],
      remote: [remote('m1', 'img', 'a.png'), remote('aa', 'img', 'A.png')],
    })
    expect(items.map((i) => [i.id, i.path, i.action])).toEqual([
      ['aa', 'media/img/A~aa.png', 'pull'],
      ['m1', 'media/img/a.png', 'none'],
    ])
  })

  test('deleted locally: delete-remote; deleted on the server: delete-local', () => {
    expect(
      run({ base: [synced], index: { 'img/a.png': 'm1' }, remote: [remote('m1', 'img', 'a.png')] }).items,
    ).toMatchObject([{ action: 'delete-remote' }])
    expect(
      run({ base: [synced], index: { 'img/a.png': 'm1' }, files: [file('img/a.png', 'A')] }).items,
    ).toMatchObject([{ action: 'delete-local' }])
  })

  test('a fresh clone (no base): the id comes from media.yaml and the bytes are compared', () => {
    const { items, match } = run({
      index: { 'img/a.png': 'm1' },
      files: [file('img/a.png', 'A')],
      remote: [remote('m1', 'img', 'a-rewritten.png')],
    })
    expect(match.needBytes).toEqual(['m1'])
    match.remote.get('m1')!.sha256 = 'A'
    expect(planMedia(match, new Map(), {})).toMatchObject([
      { id: 'm1', path: 'media/img/a.png', action: 'merge-base' },
    ])
    expect(items[0]!.action).toBe('conflict') // before the bytes were known
  })
})

describe('media base after a kill', () => {
  test('one id under two paths (new path recorded, old not yet dropped): the newer is the base, the older is dropped', async () => {
    const { StateStore, emptyState } = await import('../../src/state/state-file.js')
    const { mediaBase } = await import('../../src/engine/media/media-snapshot.js')
    const state = emptyState({ server: 'http://x', project: 'demo', environment: 'live' })
    const record = (rel: string, name: string) => ({
      kind: 'media' as const,
      id: 'm1',
      path: `media/${rel}`,
      baseHash: 'A',
      remoteRev: 'r',
      media: { sha256: 'A', name, folder: 'docs' },
    })
    state.items['media/docs/old.txt'] = record('docs/old.txt', 'old.txt')
    state.items['media/docs/new.txt'] = record('docs/new.txt', 'new.txt')
    const stale: string[] = []
    const base = mediaBase(new StateStore('/nonexistent', state), stale)
    expect(base.get('m1')).toMatchObject({ rel: 'docs/new.txt', name: 'new.txt' })
    expect(stale).toEqual(['media/docs/old.txt'])
    // The renamed file is still found by its bytes, and the server's rename is no conflict.
    const { items } = run({
      base: [...base.values()],
      index: { 'docs/old.txt': 'm1' },
      files: [file('docs/new.txt', 'A')],
      remote: [remote('m1', 'docs', 'new.txt', 'r')],
    })
    expect(items.filter((i) => i.action !== 'none')).toEqual([])
  })
})
