import { describe, expect, test } from 'vitest'
import {
  type Action,
  type Change,
  changesOf,
  decide,
  decideTwice,
  plan,
  type Side,
  type Version,
} from '../../src/engine/plan.js'

// One row per line of the README's "How sync decides" table. A, B, C are three different
// hashes; '-' means the side does not have the item.
type Row = [
  name: string,
  base: string,
  local: string,
  remote: string,
  local: Change,
  remote: Change,
  action: Action,
]
const h = (x: string) => (x === '-' ? undefined : x)

const TABLE: Row[] = [
  ['unchanged on both sides', 'A', 'A', 'A', 'unchanged', 'unchanged', 'none'],
  ['edited locally', 'A', 'B', 'A', 'modified', 'unchanged', 'push'],
  ['edited on the server', 'A', 'A', 'B', 'unchanged', 'modified', 'pull'],
  ['edited differently on both sides', 'A', 'B', 'C', 'modified', 'modified', 'conflict'],
  ['edited the same way on both sides', 'A', 'B', 'B', 'modified', 'modified', 'merge-base'],
  ['deleted on the server, unchanged locally', 'A', 'A', '-', 'unchanged', 'deleted', 'delete-local'],
  ['deleted on the server, edited locally', 'A', 'B', '-', 'modified', 'deleted', 'conflict'],
  ['deleted locally, unchanged on the server', 'A', '-', 'A', 'deleted', 'unchanged', 'delete-remote'],
  ['deleted locally, edited on the server', 'A', '-', 'B', 'deleted', 'modified', 'conflict'],
  ['deleted on both sides', 'A', '-', '-', 'deleted', 'deleted', 'merge-base'],
  ['added locally', '-', 'A', '-', 'added', 'unchanged', 'push'],
  ['added on the server', '-', '-', 'A', 'unchanged', 'added', 'pull'],
  ['added on both sides, equal (fresh clone)', '-', 'A', 'A', 'added', 'added', 'merge-base'],
  ['added on both sides, different (fresh clone)', '-', 'A', 'B', 'added', 'added', 'conflict'],
]

describe('decide: every presence case and hash relation', () => {
  test.each(TABLE)('%s', (_name, base, local, remote, localChange, remoteChange, action) => {
    expect(decide(h(base), h(local), h(remote))).toEqual({ local: localChange, remote: remoteChange, action })
  })

  test('an item present nowhere is a bug, not a plan entry', () => {
    expect(() => decide(undefined, undefined, undefined)).toThrow(/present nowhere/)
  })
})

type PreferRow = [name: string, base: string, local: string, remote: string, prefer: Side, action: Action]
const PREFER: PreferRow[] = [
  ['both edited, local wins', 'A', 'B', 'C', 'local', 'push'],
  ['both edited, remote wins', 'A', 'B', 'C', 'remote', 'pull'],
  ['edited locally, deleted remotely, local wins', 'A', 'B', '-', 'local', 'push'],
  ['edited locally, deleted remotely, remote wins', 'A', 'B', '-', 'remote', 'delete-local'],
  ['deleted locally, edited remotely, local wins', 'A', '-', 'B', 'local', 'delete-remote'],
  ['deleted locally, edited remotely, remote wins', 'A', '-', 'B', 'remote', 'pull'],
  ['fresh clone, different, local wins', '-', 'A', 'B', 'local', 'push'],
  ['fresh clone, different, remote wins', '-', 'A', 'B', 'remote', 'pull'],
]

describe('--prefer settles conflicts and only conflicts', () => {
  test.each(PREFER)('%s', (_name, base, local, remote, prefer, action) => {
    expect(decide(h(base), h(local), h(remote), { prefer })).toMatchObject({ action, settledFor: prefer })
  })

  test.each(TABLE.filter((row) => row[6] !== 'conflict'))(
    '%s is not affected by --prefer',
    (_n, b, l, r, _lc, _rc, action) => {
      for (const prefer of ['local', 'remote'] as const) {
        const decision = decide(h(b), h(l), h(r), { prefer })
        expect(decision.action).toBe(action)
        expect(decision.settledFor).toBeUndefined()
      }
    },
  )
})

// A small builder for whole indexes, after changesets' FakeFullState.
function index(entries: Record<string, string>): Map<string, Version> {
  return new Map(
    Object.entries(entries).map(([path, hash]) => {
      const [folder, file] = path.split('/') as [string, string]
      const kind = folder === 'schemas' ? 'schema' : 'content'
      return [path, { kind, id: file.replace(/\.json$/, ''), path, hash }]
    }),
  )
}

describe('plan over whole indexes', () => {
  test('a fresh clone (no base) never deletes: one-sided items are created on the other side', () => {
    const result = plan(
      index({}),
      index({ 'content/a.json': 'A', 'content/b.json': 'B', 'schemas/s.json': 'S' }),
      index({ 'content/a.json': 'A', 'content/b.json': 'X', 'content/c.json': 'C' }),
    )
    expect(result.items.map((i) => [i.path, i.action])).toEqual([
      ['content/a.json', 'merge-base'],
      ['content/b.json', 'conflict'],
      ['content/c.json', 'pull'],
      ['schemas/s.json', 'push'],
    ])
    expect(result.items.some((i) => i.action.startsWith('delete'))).toBe(false)
  })

  test('items are sorted by path and carry kind and id', () => {
    const result = plan(
      index({ 'schemas/s.json': 'S' }),
      index({ 'schemas/s.json': 'S2' }),
      index({ 'schemas/s.json': 'S' }),
    )
    expect(result.items).toEqual([
      {
        kind: 'schema',
        id: 's',
        path: 'schemas/s.json',
        local: 'modified',
        remote: 'unchanged',
        action: 'push',
      },
    ])
  })

  test('changesOf leaves out items needing nothing and silent base merges', () => {
    const result = plan(
      index({ 'content/a.json': 'A', 'content/gone.json': 'G' }),
      index({ 'content/a.json': 'A', 'content/new.json': 'N' }),
      index({ 'content/a.json': 'A', 'content/new.json': 'N' }),
    )
    expect(changesOf(result)).toEqual([])
  })
})

// Two bases: the state's and the lock's, when git moved the lock (docs/lock.md).
// [name, state base, lock base, local, remote, action]
const TWICE: [string, string, string, string, string, Action][] = [
  ['both bases agree the file was edited', 'A', 'A', 'B', 'A', 'push'],
  ['git pull brought what CI pushed, then an edit: the lock knows', 'A', 'B', 'C', 'B', 'push'],
  ['git pull of what CI pushed, an editor changed it since: the lock knows', 'A', 'B', 'B', 'C', 'pull'],
  ['an older checkout: the state says push, the lock says pull', 'B', 'A', 'A', 'B', 'conflict'],
  ['a git revert of a synced edit: push against pull', 'B', 'A', 'A', 'B', 'conflict'],
  ['both sides equal: the base moves', 'A', 'B', 'C', 'C', 'merge-base'],
  ['the lock has no base, the state says delete on the server', 'A', '-', '-', 'A', 'conflict'],
  ['the lock has no base, the state says delete here', 'A', '-', 'A', '-', 'conflict'],
  ['edited on both sides from either base', 'A', 'B', 'C', 'D', 'conflict'],
  [
    "a teammate's delete pulled from git: the lock has no base, gone from both sides",
    'A',
    '-',
    '-',
    '-',
    'merge-base',
  ],
  [
    'a state restored from an older backup: gone from both sides under either base',
    'A',
    'B',
    '-',
    '-',
    'merge-base',
  ],
]

describe('decideTwice (a state base and a lock base that differ)', () => {
  test.each(TWICE)('%s', (_name, base, alt, local, remote, action) => {
    expect(decideTwice(h(base), h(alt), h(local), h(remote)).action).toBe(action)
  })

  test('--prefer settles a disagreement like any conflict', () => {
    expect(decideTwice('B', 'A', 'A', 'B', { prefer: 'remote' })).toMatchObject({
      action: 'pull',
      settledFor: 'remote',
    })
  })

  test('plan uses the second base of an item that has one', () => {
    const result = plan(
      new Map([
        ['content/a.json', { kind: 'content', id: 'a', path: 'content/a.json', hash: 'B', alt: 'A' }],
      ]),
      index({ 'content/a.json': 'A' }),
      index({ 'content/a.json': 'B' }),
    )
    expect(result.items.map((i) => i.action)).toEqual(['conflict'])
  })
})
