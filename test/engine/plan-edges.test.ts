// The planner where the table in plan.test.ts left a rule unguarded: two bases that both see a
// conflict under --prefer, a state base that knows more than the lock, and what changesOf keeps.

import { describe, expect, test } from 'vitest'
import { type Action, changesOf, decideTwice, plan, type Side, type Version } from '../../src/engine/plan.js'

const h = (x: string) => (x === '-' ? undefined : x)

// [name, state base, lock base, local, remote, action]
const STATE_KNOWS_MORE: [string, string, string, string, string, Action][] = [
  [
    'synced here since the commit, then edited here: the state knows it is a push',
    'B',
    'A',
    'C',
    'B',
    'push',
  ],
  [
    'synced here since the commit, then edited on the server: the state knows it is a pull',
    'B',
    'A',
    'B',
    'C',
    'pull',
  ],
  [
    'synced here since the commit, then deleted here: the state knows it is a delete there',
    'B',
    'A',
    '-',
    'B',
    'delete-remote',
  ],
  [
    'synced here since the commit, then deleted on the server: the state knows it is a delete here',
    'B',
    'A',
    'B',
    '-',
    'delete-local',
  ],
]

describe('decideTwice: a state base that knows more than the lock', () => {
  test.each(STATE_KNOWS_MORE)('%s', (_name, base, alt, local, remote, action) => {
    const decision = decideTwice(h(base), h(alt), h(local), h(remote))
    expect(decision.action).toBe(action)
    expect(decision.settledFor).toBeUndefined()
  })
})

// [name, state base, lock base, local, remote, prefer, action]
const BOTH_SEE_A_CONFLICT: [string, string, string, string, string, Side, Action][] = [
  ['edited on both sides from either base, local wins', 'A', 'B', 'C', 'D', 'local', 'push'],
  ['edited on both sides from either base, remote wins', 'A', 'B', 'C', 'D', 'remote', 'pull'],
  [
    'edited here, deleted on the server from either base, remote wins',
    'A',
    'B',
    'C',
    '-',
    'remote',
    'delete-local',
  ],
  [
    'deleted here, edited on the server from either base, local wins',
    'A',
    'B',
    '-',
    'D',
    'local',
    'delete-remote',
  ],
]

describe('decideTwice: --prefer where both bases see a conflict', () => {
  test.each(BOTH_SEE_A_CONFLICT)('%s', (_name, base, alt, local, remote, prefer, action) => {
    expect(decideTwice(h(base), h(alt), h(local), h(remote))).toMatchObject({ action: 'conflict' })
    expect(decideTwice(h(base), h(alt), h(local), h(remote), { prefer })).toEqual({
      local: local === '-' ? 'deleted' : 'modified',
      remote: remote === '-' ? 'deleted' : 'modified',
      action,
      settledFor: prefer,
    })
  })
})

function index(entries: Record<string, string>): Map<string, Version> {
  return new Map(
    Object.entries(entries).map(([path, hash]) => [
      path,
      { kind: 'content', id: path.replace(/^content\/|\.json$/g, ''), path, hash },
    ]),
  )
}

describe('changesOf', () => {
  test('keeps every item that needs something, in plan order; only none and merge-base are left out', () => {
    const result = plan(
      index({
        'content/both.json': 'A',
        'content/deleted-here.json': 'A',
        'content/deleted-there.json': 'A',
        'content/edited-here.json': 'A',
        'content/edited-there.json': 'A',
        'content/gone.json': 'A',
        'content/same.json': 'A',
      }),
      index({
        'content/both.json': 'B',
        'content/deleted-there.json': 'A',
        'content/edited-here.json': 'B',
        'content/edited-there.json': 'A',
        'content/new.json': 'N',
        'content/same.json': 'A',
      }),
      index({
        'content/both.json': 'C',
        'content/deleted-here.json': 'A',
        'content/edited-here.json': 'A',
        'content/edited-there.json': 'B',
        'content/same.json': 'A',
      }),
    )
    expect(changesOf(result).map((item) => [item.path, item.action])).toEqual([
      ['content/both.json', 'conflict'],
      ['content/deleted-here.json', 'delete-remote'],
      ['content/deleted-there.json', 'delete-local'],
      ['content/edited-here.json', 'push'],
      ['content/edited-there.json', 'pull'],
      ['content/new.json', 'push'],
    ])
    // The items themselves, not copies: the run marks them (merges, held, settled) in place.
    expect(changesOf(result)[0]).toBe(result.items[0])
  })

  test('merges, publishes and unpublishes the run adds are changes too', () => {
    const actions: Action[] = ['merge', 'publish', 'unpublish', 'none', 'merge-base']
    const items = actions.map((action, i) => ({
      kind: 'content' as const,
      id: `i${i}`,
      path: `content/i${i}.json`,
      local: 'modified' as const,
      remote: 'modified' as const,
      action,
    }))
    expect(changesOf({ items }).map((item) => item.action)).toEqual(['merge', 'publish', 'unpublish'])
  })
})

describe('plan: why two bases make a conflict', () => {
  /** One item whose state base is `state` and whose lock base is `lock`. */
  const twoBases = (state: string, lock: string | null, local: string, remote: string, prefer?: Side) =>
    plan(
      new Map([
        ['content/a.json', { kind: 'content', id: 'a', path: 'content/a.json', hash: state, alt: lock }],
      ]),
      index({ 'content/a.json': local }),
      index({ 'content/a.json': remote }),
      prefer ? { prefer } : {},
    ).items[0]

  const ways =
    "`cms-sync resolve content/a.json --keep local` sends %s to the server; `cms-sync restore content/a.json` takes the server's into the file"

  test("a checkout of an older commit: the file is the lock's version, the server the last sync's", () => {
    expect(twoBases('S', 'K', 'K', 'S')).toEqual({
      kind: 'content',
      id: 'a',
      path: 'content/a.json',
      local: 'modified',
      remote: 'unchanged',
      action: 'conflict',
      reason: `the committed cms-sync.lock is older than the last sync here (a git checkout of an older commit or a branch switch): the file is that older version, the server still holds what was synced last. ${ways.replace('%s', 'the checked-out version')}`,
    })
  })

  test("a lock from another clone's sync: the server is the lock's version, the file the last sync's", () => {
    expect(twoBases('S', 'K', 'S', 'K')).toMatchObject({
      action: 'conflict',
      reason: `cms-sync.lock names a server version this workspace never synced (a sync from another clone, brought by git), while the file is what was synced here last. ${ways.replace('%s', "the file's version")}`,
    })
  })

  test('settled by --prefer, or a conflict either base sees, carries no such reason', () => {
    const settled = twoBases('S', 'K', 'K', 'S', 'local')
    expect(settled).toMatchObject({ action: 'push', settledFor: 'local' })
    expect(settled).not.toHaveProperty('reason')
    const edited = twoBases('S', 'K', 'L', 'R')
    expect(edited).toMatchObject({ action: 'conflict' })
    expect(edited).not.toHaveProperty('reason')
  })

  test('a lock without the item decides by the state base alone', () => {
    expect(twoBases('S', null, 'L', 'S')).toMatchObject({
      local: 'modified',
      remote: 'unchanged',
      action: 'push',
    })
    expect(twoBases('S', null, 'L', 'S')).not.toHaveProperty('reason')
  })
})

describe('decideTwice: what each side is said to have done', () => {
  test('gone from both sides: a deletion on both, the base goes', () => {
    expect(decideTwice('S', 'K', undefined, undefined)).toEqual({
      local: 'deleted',
      remote: 'deleted',
      action: 'merge-base',
    })
  })

  test('both sides hold the state base, the lock another: nothing changed, the base moves', () => {
    expect(decideTwice('S', 'K', 'S', 'S')).toEqual({
      local: 'unchanged',
      remote: 'unchanged',
      action: 'merge-base',
    })
  })
})

describe('plan: two bases with one side gone', () => {
  const item = (hash: string, alt: string) =>
    new Map([['content/a.json', { kind: 'content' as const, id: 'a', path: 'content/a.json', hash, alt }]])
  const none = new Map<string, Version>()

  test('deleted here after the last sync: deleted on the server, as the state says', () => {
    expect(plan(item('S', 'K'), none, index({ 'content/a.json': 'S' })).items).toEqual([
      {
        kind: 'content',
        id: 'a',
        path: 'content/a.json',
        local: 'deleted',
        remote: 'unchanged',
        action: 'delete-remote',
      },
    ])
  })

  test('deleted on the server, edited here: a conflict that needs no second reason', () => {
    const [only] = plan(item('S', 'K'), index({ 'content/a.json': 'L' }), none).items
    expect(only).toEqual({
      kind: 'content',
      id: 'a',
      path: 'content/a.json',
      local: 'modified',
      remote: 'deleted',
      action: 'conflict',
    })
  })

  test('deleted here, edited on the server: a conflict too', () => {
    expect(plan(item('S', 'K'), none, index({ 'content/a.json': 'R' })).items[0]).toMatchObject({
      local: 'deleted',
      remote: 'modified',
      action: 'conflict',
    })
  })
})
