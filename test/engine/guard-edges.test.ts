// The guards at their edges: the cases a rule can be switched off in without guards.test.ts
// noticing (a mixed selection, --allow-deletes on every guard it lifts, a limit of 0, a form
// that holds entries).

import { describe, expect, test } from 'vitest'
import {
  countBase,
  deleteGuard,
  describeStop,
  formEntriesGuard,
  inheritanceGuard,
  listingGuard,
  rerunFlag,
} from '../../src/engine/guards.js'
import type { Action, PlanItem } from '../../src/engine/plan.js'

const item = (id: string, action: Action, kind: 'form' | 'content' = 'content'): PlanItem => ({
  kind,
  id,
  path: `${kind === 'form' ? 'forms' : 'content'}/${id}.json`,
  local: 'unchanged',
  remote: 'deleted',
  action,
})
const rows = (n: number) => Array.from({ length: n }, () => ({ kind: 'content' as const }))

describe('form-entries guard', () => {
  const contact = { path: 'forms/contact.json', entries: 3 }

  test('deleting a form that holds entries stops, naming the form and how many entries go with it', () => {
    const result = formEntriesGuard([contact, { path: 'forms/poll.json', entries: 1 }], {
      allowDeletes: false,
    })
    expect(result).toEqual({
      ok: false,
      reason: 'form-entries',
      forms: [contact, { path: 'forms/poll.json', entries: 1 }],
    })
    if (result.ok) return
    expect(describeStop(result)).toMatch(
      /would delete forms that hold entries, and the entries with them: forms\/contact\.json \(3 entries\), forms\/poll\.json \(1 entry\); nothing was changed/,
    )
    expect(rerunFlag(result)).toBe('--allow-deletes')
  })

  test('one form with a single entry is enough: it is not a question of how many', () => {
    expect(formEntriesGuard([{ path: 'forms/a.json', entries: 1 }], { allowDeletes: false })).toMatchObject({
      ok: false,
      reason: 'form-entries',
    })
  })

  test('no form with entries, or --allow-deletes, lets the run through', () => {
    expect(formEntriesGuard([], { allowDeletes: false })).toEqual({ ok: true })
    expect(formEntriesGuard([contact], { allowDeletes: true })).toEqual({ ok: true })
  })
})

describe('inheritance guard over a mixed selection', () => {
  const base = countBase([
    { kind: 'content', path: 'content/a.json', inherited: true },
    { kind: 'content', path: 'content/b.json', inherited: true },
    { kind: 'content', path: 'content/own.json' },
  ])
  const noneInherited = [{ inherited: false }, { inherited: false }]

  test('one inherited local delete among edits stops, wherever it stands in the selection', () => {
    for (const selected of [
      [item('own', 'push'), item('b', 'pull'), item('a', 'delete-local')],
      [item('a', 'delete-local'), item('own', 'push')],
    ])
      expect(inheritanceGuard(selected, base, noneInherited, { allowDeletes: false })).toEqual({
        ok: false,
        reason: 'inheritance-lost',
        had: 2,
      })
  })

  test('edits of inherited items and local deletes of own items do not count', () => {
    const selected = [
      item('a', 'push'),
      item('b', 'pull'),
      item('own', 'delete-local'),
      item('b', 'delete-remote'),
    ]
    expect(inheritanceGuard(selected, base, noneInherited, { allowDeletes: false })).toEqual({ ok: true })
  })
})

describe('--allow-deletes lifts the listing guard', () => {
  test('an emptied listing with local deletes goes through when asked for', () => {
    const selected = [item('a', 'delete-local'), item('b', 'delete-local')]
    expect(listingGuard(selected, countBase(rows(2)), [], { allowDeletes: false })).toMatchObject({
      ok: false,
    })
    expect(listingGuard(selected, countBase(rows(2)), [], { allowDeletes: true })).toEqual({ ok: true })
  })

  test('a kind that had nothing synced is not an emptied listing', () => {
    expect(listingGuard([item('a', 'delete-local')], countBase([]), [], { allowDeletes: false })).toEqual({
      ok: true,
    })
  })

  test('each kind is counted in its own listing', () => {
    const base = countBase([...rows(3), { kind: 'form' }])
    // Content still listed; the one form gone with the rest of the form listing.
    expect(
      listingGuard([item('a', 'delete-local'), item('f', 'delete-local', 'form')], base, rows(2), {
        allowDeletes: false,
      }),
    ).toEqual({ ok: false, reason: 'listing-emptied', kind: 'form', had: 1 })
  })
})

describe('maxDeletePercent: 0', () => {
  test('every deletion needs --allow-deletes, one alone of many too', () => {
    const opts = { maxDeletePercent: 0, allowDeletes: false }
    expect(deleteGuard([item('a', 'delete-remote')], countBase(rows(10)), opts)).toEqual({
      ok: false,
      reason: 'max-delete',
      kind: 'content',
      deleting: 1,
      of: 10,
      maxPercent: 0,
      maxDeletes: 20,
    })
    expect(deleteGuard([item('a', 'delete-local')], countBase(rows(1000)), opts)).toMatchObject({ ok: false })
    expect(
      deleteGuard([item('a', 'delete-remote')], countBase(rows(10)), { ...opts, allowDeletes: true }),
    ).toEqual({
      ok: true,
    })
  })

  test('a run that deletes nothing passes', () => {
    expect(
      deleteGuard([item('a', 'push'), item('b', 'pull')], countBase(rows(10)), {
        maxDeletePercent: 0,
        allowDeletes: false,
      }),
    ).toEqual({ ok: true })
  })
})
