// What a guard's stop tells the user, and the deletes the engine holds back: the orphan guard,
// the target guard's message, the flag each stop asks for, and the deletes held for a renamed
// file or a schema still in use (each message names the files to look at).

import { describe, expect, test } from 'vitest'
import {
  countBase,
  deleteGuard,
  deletesHeldByRenamedFiles,
  deletesHeldByUse,
  describeOrphaning,
  describeStop,
  type GuardStop,
  inheritanceGuard,
  listingGuard,
  orphanGuard,
  rerunFlag,
  targetGuard,
} from '../../src/engine/guards.js'
import type { Action, PlanItem } from '../../src/engine/plan.js'

type TestKind = 'content' | 'schema' | 'form'

/** The schema-in-use rule, given what each content file names as its schema after the run. */
const heldBySchemaUse = (selected: PlanItem[], schemaOf: ReadonlyMap<string, string | undefined>) =>
  deletesHeldByUse(
    selected,
    new Map(
      [...schemaOf].map(([path, id]) => [
        path,
        id === undefined ? undefined : { by: 'content' as const, kind: 'schema' as const, id },
      ]),
    ),
  )
const folders = { content: 'content', schema: 'schemas', form: 'forms' }
const item = (id: string, action: Action, kind: TestKind = 'content'): PlanItem => ({
  kind,
  id,
  path: `${folders[kind]}/${id}.json`,
  local: 'deleted',
  remote: 'unchanged',
  action,
})

/** A stop, failing the test when the guard let the run through. */
function stopOf(result: ReturnType<typeof deleteGuard>): GuardStop {
  if (result.ok) throw new Error('expected a safety stop')
  return result
}

describe('orphan guard', () => {
  test('no parent delete that orphans children: the run goes on', () => {
    expect(orphanGuard(new Map())).toEqual({ ok: true })
  })

  test('a parent whose delete would orphan children stops, naming parent and children', () => {
    const stop = stopOf(
      orphanGuard(
        new Map([
          ['content/blog.json', ['content/post-1.json', 'content/post-2.json']],
          ['content/docs.json', ['content/intro.json']],
        ]),
      ),
    )
    expect(stop).toEqual({
      ok: false,
      reason: 'orphans',
      parents: [
        { path: 'content/blog.json', children: ['content/post-1.json', 'content/post-2.json'] },
        { path: 'content/docs.json', children: ['content/intro.json'] },
      ],
    })
    expect(describeStop(stop)).toBe(
      'safety stop: deleting content/blog.json on the server would leave its children without a parent (the server moves them to the root): content/post-1.json, content/post-2.json; ' +
        'deleting content/docs.json on the server would leave its children without a parent (the server moves them to the root): content/intro.json; ' +
        "nothing was changed. Delete those children or move them under another parent in the same run, or bring the parent's file back (--allow-deletes does not lift this)",
    )
    // --allow-deletes does not lift it: the stop names no flag to re-run with.
    expect(rerunFlag(stop)).toBeUndefined()
  })

  test('a parent with many children names five and counts the rest', () => {
    const children = Array.from({ length: 7 }, (_, i) => `content/c${i}.json`)
    expect(describeOrphaning('content/p.json', children)).toBe(
      'deleting content/p.json on the server would leave its children without a parent (the server moves them to the root): ' +
        'content/c0.json, content/c1.json, content/c2.json, content/c3.json, content/c4.json and 2 more',
    )
    expect(describeOrphaning('content/p.json', children.slice(0, 5))).toMatch(/content\/c4\.json$/)
  })
})

describe('what each stop tells', () => {
  const target = { server: 'http://a', project: 'demo', environment: 'live' }

  test('the wrong target names both targets and --rebind, not --allow-deletes', () => {
    const stop = stopOf(targetGuard(target, { ...target, server: 'http://b', environment: 'staging' }, false))
    expect(describeStop(stop)).toBe(
      'safety stop: this workspace is bound to http://a demo/live, but cms-sync.yaml names http://b demo/staging; nothing was changed. Re-run with --rebind to sync with the new target',
    )
    expect(rerunFlag(stop)).toBeUndefined()
  })

  test('another project or server is another target too', () => {
    expect(targetGuard(target, { ...target, project: 'other' }, false)).toMatchObject({ ok: false })
    expect(targetGuard(target, { ...target, server: 'http://b' }, false)).toMatchObject({ ok: false })
  })

  test('the delete limit names the numbers, both settings and --allow-deletes', () => {
    const stop = stopOf(
      deleteGuard(
        [item('a', 'delete-remote'), item('b', 'delete-remote')],
        countBase(Array.from({ length: 3 }, () => ({ kind: 'content' as const }))),
        { maxDeletePercent: 50, maxDeletes: 7, allowDeletes: false },
      ),
    )
    expect(describeStop(stop)).toBe(
      'safety stop: this run would delete 2 of 3 content items (a run may delete less than 50% of a kind and at most 7 items: safety.maxDeletePercent, safety.maxDeletes); nothing was changed. Check with `cms-sync status`, then re-run with --allow-deletes if that is intended',
    )
    expect(rerunFlag(stop)).toBe('--allow-deletes')
  })

  test('an emptied listing names the kind and how many were synced', () => {
    const stop = stopOf(
      listingGuard(
        [item('a', 'delete-local', 'schema')],
        countBase([{ kind: 'schema' }, { kind: 'schema' }]),
        [],
        {
          allowDeletes: false,
        },
      ),
    )
    expect(describeStop(stop)).toBe(
      'safety stop: the server listed no schema items although 2 were synced; nothing was changed. If they really were all deleted, re-run with --allow-deletes',
    )
    expect(rerunFlag(stop)).toBe('--allow-deletes')
  })

  test('a lost inheritance names how many items were inherited and points to doctor', () => {
    const base = countBase([
      { kind: 'content', path: 'content/a.json', inherited: true },
      { kind: 'content', path: 'content/b.json', inherited: true },
      { kind: 'content', path: 'content/c.json', inherited: true },
    ])
    const stop = stopOf(inheritanceGuard([item('a', 'delete-local')], base, [], { allowDeletes: false }))
    expect(describeStop(stop)).toBe(
      'safety stop: the server no longer lists any of the 3 items it inherited from its parent project, so its sync with the parent is probably off (see `cms-sync doctor`); nothing was changed. If the inheritance really ended, re-run with --allow-deletes',
    )
    expect(rerunFlag(stop)).toBe('--allow-deletes')
  })
})

describe('deletes held for a renamed file', () => {
  test('a file that still says the id of the item deleted holds that delete, and says how to settle it', () => {
    const held = deletesHeldByRenamedFiles(
      [item('about', 'delete-remote'), item('news', 'delete-remote')],
      [
        { kind: 'content', path: 'content/about-us.json', claimsId: 'about' },
        { kind: 'content', path: 'content/home.json' },
      ],
    )
    expect([...held]).toEqual([
      [
        'content/about.json',
        'not deleted on the server: content/about-us.json still says id "about" (a renamed file?); rename it back to content/about.json, or give it the id its name stands for',
      ],
    ])
  })

  test('a claim of another kind, or a local delete, holds nothing', () => {
    const local = [{ kind: 'form' as const, path: 'forms/other.json', claimsId: 'about' }]
    expect(deletesHeldByRenamedFiles([item('about', 'delete-remote')], local).size).toBe(0)
    expect(
      deletesHeldByRenamedFiles(
        [item('about', 'delete-local')],
        [{ kind: 'content', path: 'content/about-us.json', claimsId: 'about' }],
      ).size,
    ).toBe(0)
  })
})

describe('schema deletes held while content uses the schema', () => {
  test('a schema still used after the run is held, naming its users in order', () => {
    const held = heldBySchemaUse(
      [item('section', 'delete-remote', 'schema'), item('page', 'delete-remote', 'schema')],
      new Map<string, string | undefined>([
        ['content/b.json', 'section'],
        ['content/a.json', 'section'],
        ['content/gone.json', undefined],
        ['content/c.json', 'article'],
      ]),
    )
    expect([...held]).toEqual([
      [
        'schemas/section.json',
        'not deleted on the server: the schema is still used by content/a.json, content/b.json; delete that content or give it another schema in the same run, or bring schemas/section.json back',
      ],
    ])
  })

  test('more than five users: five are named and the rest counted', () => {
    const users = new Map(Array.from({ length: 8 }, (_, i) => [`content/p${i}.json`, 'section'] as const))
    const held = heldBySchemaUse([item('section', 'delete-remote', 'schema')], users)
    expect(held.get('schemas/section.json')).toBe(
      'not deleted on the server: the schema is still used by content/p0.json, content/p1.json, content/p2.json, content/p3.json, content/p4.json and 3 more; delete that content or give it another schema in the same run, or bring schemas/section.json back',
    )
  })

  test('only schema deletes on the server are held', () => {
    const users = new Map([['content/a.json', 'section']])
    expect(heldBySchemaUse([item('section', 'delete-local', 'schema')], users).size).toBe(0)
    expect(heldBySchemaUse([item('section', 'push', 'schema')], users).size).toBe(0)
    expect(heldBySchemaUse([item('section', 'delete-remote', 'form')], users).size).toBe(0)
  })
})

test('exactly five users of a schema are all named, with nothing counted after them', () => {
  const users = new Map(Array.from({ length: 5 }, (_, i) => [`content/p${i}.json`, 'section'] as const))
  const held = heldBySchemaUse([item('section', 'delete-remote', 'schema')], users)
  expect(held.get('schemas/section.json')).toMatch(
    /used by content\/p0\.json, .*content\/p4\.json; delete that content/,
  )
})
