import { describe, expect, test } from 'vitest'
import type { Action, PlanItem } from '../../src/engine/plan.js'
import { withoutUrlPasswords } from '../../src/engine/publish-item.js'
import {
  type PublishFacts,
  type Publishing,
  publishBlocked,
  publishRouteOf,
  publishVerbOf,
} from '../../src/engine/publish-plan.js'
import { CODECS } from '../../src/workspace/codecs.js'

// One row per case of publishVerbOf: the item's entry, what the server's flag was, what the
// write leaves, what the state says is owed, the setting, and the publish entry that follows.
type Row = [
  name: string,
  action: Action,
  facts: PublishFacts,
  mode: Publishing,
  expected: 'publish' | 'unpublish' | undefined,
]

const TABLE: Row[] = [
  ['a push that sets isPublished publishes', 'push', { remote: false, written: true }, 'auto', 'publish'],
  [
    'a push that clears isPublished unpublishes',
    'push',
    { remote: true, written: false },
    'auto',
    'unpublish',
  ],
  ['a push of a published item publishes again', 'push', { remote: true, written: true }, 'auto', 'publish'],
  [
    'a push of an unpublished item deploys nothing',
    'push',
    { remote: false, written: false },
    'auto',
    undefined,
  ],
  ['a new item pushed published publishes', 'push', { written: true }, 'auto', 'publish'],
  ['a new item pushed unpublished deploys nothing', 'push', { written: false }, 'auto', undefined],
  [
    'a merge whose server half sets the flag publishes',
    'merge',
    { remote: false, written: true },
    'auto',
    'publish',
  ],
  ['a merge that writes nothing to the server deploys nothing', 'merge', { remote: true }, 'auto', undefined],
  [
    'a remote delete of a published item unpublishes first',
    'delete-remote',
    { remote: true },
    'auto',
    'unpublish',
  ],
  [
    'a remote delete of an unpublished item deploys nothing',
    'delete-remote',
    { remote: false },
    'auto',
    undefined,
  ],
  [
    'an owed publish is retried on an unchanged item',
    'none',
    { remote: true, pending: 'publish' },
    'auto',
    'publish',
  ],
  [
    'an owed unpublish is retried on an unchanged item',
    'none',
    { remote: false, pending: 'unpublish' },
    'auto',
    'unpublish',
  ],
  [
    'an owed unpublish is retried with a push that keeps it unpublished',
    'push',
    { remote: false, written: false, pending: 'unpublish' },
    'auto',
    'unpublish',
  ],
  [
    'an owed publish the server no longer asks for is dropped',
    'none',
    { remote: false, pending: 'publish' },
    'auto',
    undefined,
  ],
  ['an unchanged published item deploys nothing', 'none', { remote: true }, 'auto', undefined],
  [
    'a pull deploys nothing: the server made its own change',
    'pull',
    { remote: true, pending: 'publish' },
    'auto',
    undefined,
  ],
  ['a conflict deploys nothing', 'conflict', { remote: true, written: true }, 'auto', undefined],
  ['a local delete deploys nothing', 'delete-local', { remote: true }, 'auto', undefined],
  [
    'manual: a push that sets isPublished deploys nothing',
    'push',
    { remote: false, written: true },
    'manual',
    undefined,
  ],
  [
    'manual: a push that clears isPublished deploys nothing',
    'push',
    { remote: true, written: false },
    'manual',
    undefined,
  ],
  [
    'manual: a push of a published item deploys nothing',
    'push',
    { remote: true, written: true },
    'manual',
    undefined,
  ],
  [
    'manual: a remote delete of a published item deploys nothing',
    'delete-remote',
    { remote: true },
    'manual',
    undefined,
  ],
  [
    'manual: an owed publish waits for an auto run',
    'none',
    { remote: true, pending: 'publish' },
    'manual',
    undefined,
  ],
]

function item(action: Action, kind: PlanItem['kind'] = 'content'): PlanItem {
  return { kind, id: 'x', path: `${kind}/x.json`, local: 'modified', remote: 'unchanged', action }
}

describe('publishVerbOf: the publish or unpublish each entry brings', () => {
  test.each(TABLE)('%s', (_name, action, facts, mode, expected) => {
    expect(publishVerbOf(item(action), facts, mode)).toBe(expected)
  })

  test('only content is published', () => {
    // publish-entries.ts asks publishVerbOf only for the kinds whose codec publishes.
    expect(CODECS.filter((codec) => codec.publishes).map((codec) => codec.kind)).toEqual(['content'])
  })
})

describe('publishRouteOf: which connection a publish goes through', () => {
  const tree: Record<string, { parentId?: string; settings?: unknown }> = {
    site: { parentId: '', settings: { publishing: { connectionId: 'web', applyToChildren: true } } },
    section: { parentId: 'site', settings: { publishing: { connectionId: 'docs', applyToChildren: true } } },
    page: { parentId: 'section', settings: { publishing: { connectionId: 'own' } } },
    loose: { parentId: '', settings: { publishing: { connectionId: 'own' } } },
    bare: { parentId: '', settings: { publishing: { connectionId: '' } } },
    governedEmpty: { parentId: 'emptyParent', settings: { publishing: { connectionId: 'own' } } },
    emptyParent: { parentId: '', settings: { publishing: { connectionId: '', applyToChildren: true } } },
    loop: { parentId: 'loop2', settings: { publishing: { connectionId: 'own' } } },
    loop2: { parentId: 'loop', settings: {} },
  }
  const byId = (id: string) => tree[id]

  test('the nearest governing ancestor decides', () => {
    expect(publishRouteOf('page', byId)).toEqual({ connection: 'docs', governedBy: 'section' })
  })
  test('without a governing ancestor, the item’s own settings', () => {
    expect(publishRouteOf('loose', byId)).toEqual({ connection: 'own' })
  })
  test('neither names one: null, and the publish is known to fail', () => {
    const route = publishRouteOf('bare', byId)
    expect(route).toEqual({ connection: null })
    expect(publishBlocked({ path: 'content/bare.json', action: 'publish', publishing: route })).toMatch(
      /no connection to publish through: neither content\/bare\.json/,
    )
  })
  test('a governing ancestor without a connection governs all the same (the server fails it)', () => {
    expect(publishRouteOf('governedEmpty', byId)).toEqual({ connection: null, governedBy: 'emptyParent' })
  })
  test('a parent loop ends', () => {
    expect(publishRouteOf('loop', byId)).toEqual({ connection: 'own' })
  })
})

describe('withoutUrlPasswords: a deployer’s words never carry a password', () => {
  test('the password of an address with credentials is masked', () => {
    expect(
      withoutUrlPasswords(`Process "git clone 'https://deploy:s3cret@git.example/site.git' '/tmp/x'" exited`),
    ).toBe(`Process "git clone 'https://deploy:***@git.example/site.git' '/tmp/x'" exited`)
  })
  test('addresses without credentials stay as they are', () => {
    const text = 'could not reach http://127.0.0.1:18186/api/p/live (ECONNREFUSED); https://host/a:b@c'
    expect(withoutUrlPasswords(text)).toBe(text)
  })
})
