// A kind's own rules live in its codec (src/workspace/*-codec.ts) and the engine asks them: the
// rules each kind declares, and the held-delete guard built from a use alone, with no kind named
// in the engine.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { deletesHeldByUse } from '../../src/engine/guards.js'
import type { PlanItem } from '../../src/engine/plan.js'
import type { RemoteEntry } from '../../src/engine/remote-snapshot.js'
import { usesAfterRun } from '../../src/engine/uses-after-run.js'
import { usersOf } from '../../src/workspace/codec.js'
import { CODECS } from '../../src/workspace/codecs.js'
import { isBytes, KINDS } from '../../src/workspace/kinds.js'

const declaring = (has: (codec: (typeof CODECS)[number]) => boolean) =>
  CODECS.filter(has).map((codec) => codec.kind)

test('each rule is declared by the kinds it belongs to, and by no other', () => {
  expect(usersOf(CODECS, 'schema')).toEqual(['content'])
  expect(KINDS.filter((kind) => usersOf(CODECS, kind).length > 0)).toEqual(['schema'])
  expect(declaring((c) => c.parentField !== undefined)).toEqual(['content'])
  expect(declaring((c) => c.publishes === true)).toEqual(['content'])
  expect(declaring((c) => c.holdsEntries === true)).toEqual(['form'])
  expect(declaring((c) => c.checksServerTypes === true)).toEqual(['connection'])
  expect(declaring((c) => c.sameApartFromSecrets !== undefined)).toEqual(['connection'])
  expect(declaring((c) => c.mergesWhole !== undefined)).toEqual(['schema'])
  expect(declaring((c) => c.builtInIds !== undefined)).toEqual(['schema'])
  expect(KINDS.filter(isBytes)).toEqual(['media'])
  // A bytes kind has no codec: the JSON family never sees it.
  expect(CODECS.some((codec) => isBytes(codec.kind))).toBe(false)
})

test("a schema's field definition merges whole; a content property does not", () => {
  const schema = CODECS.find((codec) => codec.kind === 'schema')!
  expect(schema.mergesWhole?.(['fields', 'main', 'title'])).toBe(true)
  expect(schema.mergesWhole?.(['fields', 'main', 'title', 'label'])).toBe(false)
})

const entry = (kind: 'content', id: string, object: Record<string, unknown>): RemoteEntry =>
  ({ kind, id, path: `content/${id}.json`, object }) as unknown as RemoteEntry

test('a delete of an item still named once the run is done is held, naming who names it and how to go on', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'kind-rules-'))
  try {
    // home keeps the schema on the server, news is pushed naming another, old is deleted.
    await mkdir(path.join(root, 'content'))
    await writeFile(path.join(root, 'content/news.json'), JSON.stringify({ id: 'news', schemaId: 'other' }))
    const remote = new Map([
      ['content/home.json', entry('content', 'home', { id: 'home', schemaId: 'page-a' })],
      ['content/news.json', entry('content', 'news', { id: 'news', schemaId: 'page-a' })],
      ['content/old.json', entry('content', 'old', { id: 'old', schemaId: 'page-b' })],
    ])
    const chosen: PlanItem[] = [
      {
        kind: 'schema',
        id: 'page-a',
        path: 'schemas/page-a.json',
        local: 'deleted',
        remote: 'unchanged',
        action: 'delete-remote',
      },
      {
        kind: 'schema',
        id: 'page-b',
        path: 'schemas/page-b.json',
        local: 'deleted',
        remote: 'unchanged',
        action: 'delete-remote',
      },
      {
        kind: 'content',
        id: 'news',
        path: 'content/news.json',
        local: 'modified',
        remote: 'unchanged',
        action: 'push',
      },
      {
        kind: 'content',
        id: 'old',
        path: 'content/old.json',
        local: 'deleted',
        remote: 'unchanged',
        action: 'delete-remote',
      },
    ]
    const held = deletesHeldByUse(chosen, await usesAfterRun(root, CODECS, { remote }, chosen))
    expect([...held]).toEqual([
      [
        'schemas/page-a.json',
        'not deleted on the server: the schema is still used by content/home.json; ' +
          'delete that content or give it another schema in the same run, or bring schemas/page-a.json back',
      ],
    ])
    // Without a kind that names schemas, nothing is read and nothing is held.
    const unnamed = CODECS.filter((codec) => codec.kind !== 'content')
    expect(await usesAfterRun(root, unnamed, { remote }, chosen)).toEqual(new Map())
  } finally {
    await rm(root, { recursive: true, force: true })
  }
})
