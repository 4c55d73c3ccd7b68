import { describe, expect, test } from 'vitest'
import {
  countBase,
  deleteGuard,
  describeStop,
  inheritanceGuard,
  listingGuard,
  targetGuard,
} from '../../src/engine/guards.js'
import type { Action, PlanItem } from '../../src/engine/plan.js'

const item = (id: string, action: Action, kind: 'schema' | 'content' = 'content'): PlanItem => ({
  kind,
  id,
  path: `content/${id}.json`,
  local: 'unchanged',
  remote: 'deleted',
  action,
})
const rows = (n: number, kind: 'schema' | 'content' = 'content') =>
  Array.from({ length: n }, () => ({ kind }))
const base = (n: number, kind: 'schema' | 'content' = 'content') => countBase(rows(n, kind))

describe('delete guard', () => {
  test('deleting exactly half of a kind stops at the default 50% (a listing cut in two)', () => {
    expect(
      deleteGuard([item('a', 'delete-local'), item('b', 'delete-remote')], base(4), {
        maxDeletePercent: 50,
        allowDeletes: false,
      }),
    ).toMatchObject({ ok: false, deleting: 2, of: 4 })
  })

  test('one deletion is an edit, unless it is the last item of its kind', () => {
    const one = [item('a', 'delete-remote')]
    expect(deleteGuard(one, base(2), { maxDeletePercent: 50, allowDeletes: false })).toEqual({ ok: true })
    expect(deleteGuard(one, base(1), { maxDeletePercent: 50, allowDeletes: false })).toMatchObject({
      ok: false,
    })
  })

  test('more than maxDeletes stops whatever the share', () => {
    const many = Array.from({ length: 21 }, (_, i) => item(`p${i}`, 'delete-local'))
    expect(
      deleteGuard(many, base(1000), { maxDeletePercent: 50, maxDeletes: 20, allowDeletes: false }),
    ).toMatchObject({ ok: false, deleting: 21, of: 1000, maxDeletes: 20 })
    expect(
      deleteGuard(many.slice(1), base(1000), { maxDeletePercent: 50, maxDeletes: 20, allowDeletes: false }),
    ).toEqual({ ok: true })
  })

  test('deleting more than the limit stops with the numbers', () => {
    const selected = [item('a', 'delete-local'), item('b', 'delete-local'), item('c', 'delete-remote')]
    const result = deleteGuard(selected, base(4), { maxDeletePercent: 50, allowDeletes: false })
    expect(result).toEqual({
      ok: false,
      reason: 'max-delete',
      kind: 'content',
      deleting: 3,
      of: 4,
      maxPercent: 50,
      maxDeletes: 20,
    })
    if (!result.ok) expect(describeStop(result)).toMatch(/delete 3 of 4 content items/)
  })

  test('--allow-deletes lifts it', () => {
    expect(
      deleteGuard([item('a', 'delete-local')], base(1), { maxDeletePercent: 50, allowDeletes: true }),
    ).toEqual({ ok: true })
  })

  test('kinds are counted apart', () => {
    const selected = [item('s', 'delete-remote', 'schema')]
    expect(
      deleteGuard(selected, countBase([...rows(10), ...rows(1, 'schema')]), {
        maxDeletePercent: 50,
        allowDeletes: false,
      }),
    ).toMatchObject({ ok: false, kind: 'schema' })
  })
})

describe('listing guard', () => {
  test('an empty listing of a kind we had synced produces no local deletions', () => {
    expect(listingGuard([item('a', 'delete-local')], base(3), [], { allowDeletes: false })).toEqual({
      ok: false,
      reason: 'listing-emptied',
      kind: 'content',
      had: 3,
    })
  })

  test('a listing that still has items passes', () => {
    expect(listingGuard([item('a', 'delete-local')], base(3), rows(2), { allowDeletes: false })).toEqual({
      ok: true,
    })
  })

  test('it only matters when the run would delete locally', () => {
    expect(listingGuard([item('a', 'push')], base(3), [], { allowDeletes: false })).toEqual({ ok: true })
  })
})

/** A listing the guard must not read: reading it throws. */
const unread = {
  [Symbol.iterator](): Iterator<never> {
    throw new Error('the listing was read')
  },
}

describe('what the guards read', () => {
  test('a run that deletes nothing locally never reads the listing (an edit pays for itself only)', () => {
    const edits = [item('a', 'push'), item('b', 'pull'), item('c', 'delete-remote')]
    expect(listingGuard(edits, base(3), unread, { allowDeletes: false })).toEqual({ ok: true })
    expect(inheritanceGuard(edits, base(3), unread, { allowDeletes: false })).toEqual({ ok: true })
  })

  test('a local delete of an item not inherited never reads the listing for the inheritance guard', () => {
    const inherited = countBase([{ kind: 'content', path: 'content/x.json', inherited: true }, ...rows(2)])
    expect(inheritanceGuard([item('a', 'delete-local')], inherited, unread, { allowDeletes: false })).toEqual(
      {
        ok: true,
      },
    )
  })
})

describe('inheritance guard', () => {
  const inherited = countBase([
    { kind: 'content', path: 'content/a.json', inherited: true },
    { kind: 'content', path: 'content/b.json', inherited: true },
    { kind: 'content', path: 'content/c.json' },
  ])
  test('deleting an inherited item while the listing names none inherited stops, with how many were', () => {
    expect(
      inheritanceGuard([item('a', 'delete-local')], inherited, [{ inherited: false }], {
        allowDeletes: false,
      }),
    ).toEqual({ ok: false, reason: 'inheritance-lost', had: 2 })
  })

  test('a listing that still inherits something, or --allow-deletes, lets it through', () => {
    const selected = [item('a', 'delete-local')]
    expect(inheritanceGuard(selected, inherited, [{ inherited: true }], { allowDeletes: false })).toEqual({
      ok: true,
    })
    expect(inheritanceGuard(selected, inherited, [], { allowDeletes: true })).toEqual({ ok: true })
  })
})

describe('target guard', () => {
  const t = { server: 'http://a', project: 'demo', environment: 'live' }
  test('same target (trailing slash aside) passes', () => {
    expect(targetGuard(t, { ...t, server: 'http://a/' }, false)).toEqual({ ok: true })
  })
  test('another environment stops until --rebind', () => {
    expect(targetGuard(t, { ...t, environment: 'staging' }, false)).toMatchObject({
      ok: false,
      reason: 'wrong-target',
    })
    expect(targetGuard(t, { ...t, environment: 'staging' }, true)).toEqual({ ok: true })
  })
  test('a fresh clone has no binding yet', () => {
    expect(targetGuard(undefined, t, false)).toEqual({ ok: true })
  })
})
