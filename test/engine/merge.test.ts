// The merge table (design.md "Merging"), in the style of the planner's decision table: one row
// per case, the three sides in, the merged document or the conflicting leaves out. Then a
// property test: random documents, random edits on two sides.

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { mergeItem } from '../../src/engine/merge/item-merge.js'
import { type ConflictLeaf, type Json, mergedOf, mergeJson } from '../../src/engine/merge/merge-json.js'
import { CODECS } from '../../src/workspace/codecs.js'
import { MERGE_TABLE } from '../helpers/merge-table.js'

describe('the merge table', () => {
  it.each(MERGE_TABLE)('$name', (row) => {
    const codec = CODECS.find((c) => c.kind === (row.kind ?? 'content'))!
    const result = mergeItem(codec, row.base, row.local, row.remote)
    if (row.merged) {
      expect(result.conflicts).toEqual([])
      // Key order is part of the file: compare the bytes.
      expect(JSON.stringify(mergedOf(result))).toBe(JSON.stringify(row.merged))
    } else {
      expect(result.conflicts).toEqual(row.conflicts)
      expect(mergedOf(result)).toBeUndefined()
    }
    // Whichever side is called local.
    const swapped = mergeItem(codec, row.base, row.remote, row.local)
    expect(swapped.conflicts).toEqual(result.conflicts.map(swap))
    expect(JSON.stringify(swapped.local)).toBe(JSON.stringify(result.remote))
  })

  it('settles chosen leaves and merges the rest', () => {
    const result = mergeJson(
      { a: 1, b: 1, c: 1 },
      { a: 2, b: 2, c: 1 },
      { a: 3, b: 1, c: 3 },
      { choose: (leaf) => (leaf.path === '/a' ? 'remote' : undefined) },
    )
    expect(result.conflicts).toEqual([])
    expect(result.settled).toEqual([{ path: '/a', base: 1, local: 2, remote: 3, kept: 'remote' }])
    expect(mergedOf(result)).toEqual({ a: 3, b: 2, c: 3 })
  })

  it('leaves unsettled leaves at each side while the settled ones agree', () => {
    const result = mergeJson(
      { a: 1, b: 1, c: 1 },
      { a: 2, b: 2, c: 1 },
      { a: 3, b: 3, c: 3 },
      { choose: (leaf) => (leaf.path === '/a' ? 'local' : undefined) },
    )
    expect(result.conflicts.map((c) => c.path)).toEqual(['/b'])
    expect(result.local).toEqual({ a: 2, b: 2, c: 3 })
    expect(result.remote).toEqual({ a: 2, b: 3, c: 3 })
  })
})

function swap(leaf: ConflictLeaf): ConflictLeaf {
  const { local, remote, ...rest } = leaf
  return {
    path: rest.path,
    ...(rest.base === undefined ? {} : { base: rest.base }),
    ...(remote === undefined ? {} : { local: remote }),
    ...(local === undefined ? {} : { remote: local }),
    ...(rest.order ? { order: true as const } : {}),
  }
}

// --- property: random documents, random edits on two sides ---------------------------------

const KEYS = ['a', 'b', 'c', 'd', 'e']
const primitive = fc.oneof(
  fc.integer({ min: 0, max: 4 }),
  fc.constantFrom('x', 'y', 'z'),
  fc.boolean(),
  fc.constant(null),
)
const leafValue: fc.Arbitrary<Json> = fc.oneof(
  primitive,
  fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }),
)
const doc: fc.Arbitrary<Json> = fc
  .letrec<{ node: Json }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leafValue,
      fc.dictionary(fc.constantFrom(...KEYS), tie('node'), { maxKeys: 4 }),
    ),
  }))
  .node.filter((value): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value))

interface Edit {
  op: 'set' | 'delete' | 'add' | 'reorder'
  at: number
  key: string
  value: Json
}
const edit: fc.Arbitrary<Edit> = fc.record({
  op: fc.constantFrom('set', 'delete', 'add', 'reorder'),
  at: fc.nat(),
  key: fc.constantFrom(...KEYS),
  value: fc.oneof(leafValue, fc.dictionary(fc.constantFrom(...KEYS), primitive, { maxKeys: 2 })),
})

type Obj = Record<string, Json>
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Every object in the document with its parent link: where an edit can land. */
function objectsOf(value: Json, out: Obj[] = []): Obj[] {
  if (isObj(value)) {
    out.push(value)
    for (const child of Object.values(value)) objectsOf(child, out)
  }
  return out
}

function applyEdits(base: Json, edits: Edit[]): Json {
  const copy = structuredClone(base)
  for (const e of edits) {
    const targets = objectsOf(copy)
    const target = targets[e.at % targets.length]!
    const keys = Object.keys(target)
    if (e.op === 'add') target[e.key] = structuredClone(e.value)
    else if (keys.length === 0) continue
    else if (e.op === 'set') target[keys[e.at % keys.length]!] = structuredClone(e.value)
    else if (e.op === 'delete') delete target[keys[e.at % keys.length]!]
    else {
      // Move one key to the end.
      const key = keys[e.at % keys.length]!
      const v = target[key]!
      delete target[key]
      target[key] = v
    }
  }
  return copy
}

/** The document's leaves: path -> value (empty objects and arrays are leaves too). */
function leaves(value: Json | undefined, path = '', out = new Map<string, string>()): Map<string, string> {
  if (isObj(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) leaves(v, `${path}/${k}`, out)
  } else if (value !== undefined) out.set(path, JSON.stringify(value))
  return out
}

const related = (p: string, q: string) => p === q || p.startsWith(`${q}/`) || q.startsWith(`${p}/`)

function valueAt(doc: Json, path: string): Json | undefined {
  let value: Json | undefined = doc
  for (const key of path.split('/').slice(1)) value = isObj(value) ? value[key] : undefined
  return value
}

/** Objects whose keys (those both have) the side put in another order: an edit of the object. */
function reordered(base: Json | undefined, side: Json | undefined, path = ''): string[] {
  if (!isObj(base) || !isObj(side)) return []
  const order = (o: Obj, other: Obj) => Object.keys(o).filter((k) => k in other)
  const here = order(base, side).join('\0') !== order(side, base).join('\0') ? [path] : []
  return [...here, ...Object.keys(base).flatMap((k) => reordered(base[k], side[k], `${path}/${k}`))]
}

/**
 * Where an edit to a leaf really happened: the first node on its way down that is not an object
 * on both the base and the side (a key deleted or replaced with a value takes its leaves along).
 */
function editRoot(base: Json, side: Json, path: string): string {
  const parts = path.split('/').slice(1)
  for (let i = 0; i <= parts.length; i++) {
    const q = parts
      .slice(0, i)
      .map((k) => `/${k}`)
      .join('')
    if (!isObj(valueAt(base, q)) || !isObj(valueAt(side, q))) return q
  }
  return path
}

/** Leaves one side changed (set, added or deleted) relative to the base. */
function editedLeaves(base: Map<string, string>, side: Map<string, string>): string[] {
  const paths = new Set([...base.keys(), ...side.keys()])
  return [...paths].filter((p) => base.get(p) !== side.get(p))
}

describe('merge properties', () => {
  it('never drops an edit no other edit touched, and is the same whichever side is local', () => {
    fc.assert(
      fc.property(doc, fc.array(edit, { maxLength: 4 }), fc.array(edit, { maxLength: 4 }), (base, le, re) => {
        const local = applyEdits(base, le)
        const remote = applyEdits(base, re)
        const result = mergeJson(base, local, remote)
        const [b, l, r] = [leaves(base), leaves(local), leaves(remote)]
        const [rl, rr] = [leaves(result.local), leaves(result.remote)]
        const localEdits = editedLeaves(b, l)
        const remoteEdits = editedLeaves(b, r)
        const localRoots = [...localEdits.map((p) => editRoot(base, local, p)), ...reordered(base, local)]
        const remoteRoots = [...remoteEdits.map((p) => editRoot(base, remote, p)), ...reordered(base, remote)]
        for (const [mine, theirs, side, doc] of [
          [localEdits, remoteRoots, l, local],
          [remoteEdits, localRoots, r, remote],
        ] as const) {
          for (const p of mine) {
            const root = editRoot(base, doc, p)
            if (theirs.some((q) => related(root, q))) continue
            // Untouched by the other side: both sides of the result carry it.
            expect(rl.get(p), `${p} in the local result`).toBe(side.get(p))
            expect(rr.get(p), `${p} in the remote result`).toBe(side.get(p))
          }
        }
        // An unchanged side gives the other side's document exactly.
        if (localEdits.length === 0 && JSON.stringify(local) === JSON.stringify(base))
          expect(JSON.stringify(mergedOf(result))).toBe(JSON.stringify(remote))
        const swapped = mergeJson(base, remote, local)
        expect(swapped.conflicts).toEqual(result.conflicts.map(swap))
        expect(JSON.stringify(swapped.local)).toBe(JSON.stringify(result.remote))
        expect(JSON.stringify(swapped.remote)).toBe(JSON.stringify(result.local))
      }),
      { numRuns: 1000, seed: 20261124 },
    )
  })
})
