// One planner case per row of the merge table: the same three sides, put into a workspace and a
// server, then planned by the run every command shares (planRun). The plan names the merge, or
// the conflicting leaves, exactly as the pure merge does.

import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, test } from 'vitest'
import { applyRun, planRun, SELECT } from '../../src/engine/plan-and-apply.js'
import { canonicalJson } from '../../src/workspace/canonical-json.js'
import { engineOver, RUN_OPTIONS } from '../helpers/engine-world.js'
import { contentOf, SECTION_SCHEMA } from '../helpers/fixtures.js'
import { type J, MERGE_TABLE, type MergeRow } from '../helpers/merge-table.js'

/** Whether files keep the server's key order; while they sort keys, a reorder is no edit. */
const keepsOrder = canonicalJson({ b: 1, a: 2 }).startsWith('{\n  "b"')

/** Each row's documents as an item of its kind: a content's properties, or a schema or a form. */
function itemOf(
  row: MergeRow,
  doc: J,
): { kind: 'content' | 'schema' | 'form'; id: string; object: J; prefix: string } {
  if (row.kind === 'schema')
    return {
      kind: 'schema',
      id: 'section',
      object: { ...SECTION_SCHEMA, ...doc, id: 'section' } as J,
      prefix: '',
    }
  if (row.kind === 'form')
    return { kind: 'form', id: 'contact', object: { ...doc, id: 'contact' }, prefix: '' }
  return {
    kind: 'content',
    id: 'home',
    object: contentOf('home', { properties: doc }) as J,
    prefix: '/properties',
  }
}

const folder = { content: 'content', schema: 'schemas', form: 'forms' }

const rows = MERGE_TABLE.filter((row) => keepsOrder || !/reorder/.test(row.name))

test.each(rows)('$name', async (row) => {
  const { root, remote, deps } = await engineOver('merge-plan')
  const base = itemOf(row, row.base)
  remote.seed(base.kind, base.object)
  expect(
    (await applyRun(deps, await planRun(deps, {}), { ...RUN_OPTIONS, select: SELECT.sync })).failed,
  ).toEqual([])
  const file = path.join(root, folder[base.kind], `${base.id}.json`)
  const { createDate: _c, ...localFile } = itemOf(row, row.local).object
  await writeFile(file, JSON.stringify(localFile))
  remote.seed(base.kind, itemOf(row, row.remote).object)
  const planned = await planRun(deps, {})
  const item = planned.plan.items.find((i) => i.path === path.relative(root, file))!
  if (row.conflicts) {
    expect(item.action).toBe('conflict')
    expect(item.leaves?.map((leaf) => leaf.path)).toEqual(
      row.conflicts.map((c) => (c.path === '' ? base.prefix : `${base.prefix}${c.path}`)),
    )
    return
  }
  const merged = JSON.stringify(row.merged)
  // A merge that equals one side is that side's push or pull.
  const expected =
    merged === JSON.stringify(row.local) ? 'push' : merged === JSON.stringify(row.remote) ? 'pull' : 'merge'
  expect(item.action).toBe(expected)
  expect((await applyRun(deps, planned, { ...RUN_OPTIONS, select: SELECT.sync })).failed).toEqual([])
  const onServer = remote.items.get(`${base.kind}:${base.id}`) as J
  expect(base.prefix ? onServer.properties : onServer).toMatchObject({
    ...row.merged!,
    ...(base.prefix ? {} : { id: base.id }),
  })
})
