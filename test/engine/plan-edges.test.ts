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
