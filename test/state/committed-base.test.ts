// cms-sync.lock parsing: what git can do to the file (conflict regions, union merges, hand
// edits) never yields a base that was not written whole by a sync.

import { describe, expect, test } from 'vitest'
import { LockFileError, lockText, parseLock } from '../../src/state/committed-base.js'
import type { ItemState } from '../../src/state/state-file.js'

const TARGET = { server: 'http://127.0.0.1:8080', project: 'demo', environment: 'live' }
const hash = (c: string) => c.repeat(64)
const item = (id: string, h: string, rev = 'r1'): ItemState => ({
  kind: 'content',
  id,
  path: `content/${id}.json`,
  baseHash: hash(h),
  remoteRev: rev,
})

describe('cms-sync.lock', () => {
  test('round trip: sorted by path, one line per item, the stat cache left out', () => {
    const text = lockText(TARGET, [
      { ...item('b', 'b'), stat: { size: 1, mtimeMs: 2, ino: 3 } },
      item('a', 'a'),
      {
        kind: 'media',
        id: 'm1',
        path: 'media/x y.png',
        baseHash: hash('c'),
        remoteRev: '',
        media: { sha256: hash('c'), name: 'x y.png', folder: '' },
      },
    ])
    const lines = text.trimEnd().split('\n')
    expect(lines.slice(2).map((l) => JSON.parse(l).path)).toEqual([
      'content/a.json',
      'content/b.json',
      'media/x y.png',
    ])
    const parsed = parseLock(text)
    expect(parsed.target).toEqual(TARGET)
    // Every base read from the lock says so: its word alone deletes or overwrites nothing (lock-proof.ts)
    expect(parsed.items.get('content/b.json')).toEqual({ ...item('b', 'b'), fromLock: true })
    expect(parsed.items.get('media/x y.png')?.media).toEqual({
      sha256: hash('c'),
      name: 'x y.png',
      folder: '',
    })
    expect(lockText(TARGET, parsed.items.values())).toBe(text)
  })

  test('lines inside a git conflict region are no base; the rest are', () => {
    const ours = lockText(TARGET, [item('a', 'a'), item('b', 'b'), item('c', 'c')]).split('\n')
    const theirs = lockText(TARGET, [item('b', 'd', 'r2')]).split('\n')[2]
    const merged = [
      ...ours.slice(0, 3),
      '<<<<<<< HEAD',
      ours[3],
      '||||||| base',
      '=======',
      theirs,
      '>>>>>>> other',
      ours[4],
      '',
    ].join('\n')
    const parsed = parseLock(merged)
    expect([...parsed.items.keys()]).toEqual(['content/a.json', 'content/c.json'])
    expect([...parsed.untrusted]).toEqual(['content/b.json'])
  })

  test('a union merge (the same item twice with different facts) is no base; a repeated line is one', () => {
    const a = lockText(TARGET, [item('a', 'a'), item('b', 'b')])
    const b = lockText(TARGET, [item('a', 'a'), item('b', 'e', 'r9')]).split('\n')[3]
    const parsed = parseLock(`${a}${b}\n`)
    expect([...parsed.items.keys()]).toEqual(['content/a.json'])
    expect(parseLock(`${a}${a.split('\n')[2]}\n`).items.size).toBe(2)
  })

  test.each([
    ['not JSON', 'content/a.json abc', /line 3: expected one JSON object per line/],
    [
      'a path that is not the id',
      `{"path":"content/b.json","kind":"content","id":"a","hash":"${hash('a')}","rev":""}`,
      /line 3: "path": expected content\/a\.json/,
    ],
    [
      'a path out of the workspace',
      `{"path":"../x.json","kind":"content","id":"x","hash":"${hash('a')}","rev":""}`,
      /"path": expected a workspace path/,
    ],
    [
      'a short hash',
      '{"path":"content/a.json","kind":"content","id":"a","hash":"abc","rev":""}',
      /"hash": expected a sha256/,
    ],
    [
      'an unknown kind',
      `{"path":"x/a.json","kind":"page","id":"a","hash":"${hash('a')}","rev":""}`,
      /"kind": expected one of/,
    ],
    [
      'a key twice (a reader sees the first, JSON keeps the last)',
      `{"path":"content/a.json","kind":"content","id":"a","hash":"${hash('a')}","rev":"","hash":"${hash('b')}"}`,
      /line 3: column 135: the key "hash" appears twice/,
    ],
  ])('a damaged line is named: %s', (_name, line, message) => {
    const text = `${lockText(TARGET, [])}${line}\n`
    expect(() => parseLock(text)).toThrow(LockFileError)
    expect(() => parseLock(text)).toThrow(message)
  })

  test('two different targets (a merge of two workspaces) are refused', () => {
    const other = lockText({ ...TARGET, environment: 'staging' }, []).split('\n')[1]
    expect(() => parseLock(`${lockText(TARGET, [])}${other}\n`)).toThrow(/two different targets/)
  })
})
