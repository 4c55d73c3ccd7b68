// Merge rules the table in merge.test.ts does not reach: the order conflicts are listed in,
// which arrays merge item by item (numeric ids, ids on every item, an array new on both sides),
// what a multilingual value's languages are, and which paths are one leaf for which kind.
// Documents are compared as text: key order is part of the file.

import { describe, expect, it } from 'vitest'
import { mergeItem } from '../../src/engine/merge/item-merge.js'
import { type Json, mergedOf, mergeJson } from '../../src/engine/merge/merge-json.js'
import { formCodec } from '../../src/workspace/form-codec.js'
import { schemaCodec } from '../../src/workspace/schema-codec.js'

const text = (value: Json | undefined) => JSON.stringify(value)

describe('the list of conflicts', () => {
  it('is sorted by path, whatever order the keys stand in', () => {
    const result = mergeJson(
      { d: 1, c: 1, b: 1, a: 1 },
      { d: 2, c: 2, b: 2, a: 2 },
      { d: 3, c: 3, b: 3, a: 3 },
    )
    expect(result.conflicts.map((leaf) => leaf.path)).toEqual(['/a', '/b', '/c', '/d'])
    const settled = mergeJson(
      { d: 1, c: 1, b: 1, a: 1 },
      { d: 2, c: 2, b: 2, a: 2 },
      { d: 3, c: 3, b: 3, a: 3 },
      { choose: () => 'local' },
    )
    expect(settled.settled.map((leaf) => leaf.path)).toEqual(['/a', '/b', '/c', '/d'])
    expect(text(mergedOf(settled))).toBe(text({ d: 2, c: 2, b: 2, a: 2 }))
  })
})

describe('arrays that merge item by item', () => {
  it('numeric ids are ids: edits of different items merge', () => {
    const base = {
      list: [
        { id: 1, v: 'a' },
        { id: 2, v: 'b' },
      ],
    }
    const result = mergeJson(
      base,
      {
        list: [
          { id: 1, v: 'A' },
          { id: 2, v: 'b' },
        ],
      },
      {
        list: [
          { id: 1, v: 'a' },
          { id: 2, v: 'B' },
        ],
      },
    )
    expect(result.conflicts).toEqual([])
    expect(text(mergedOf(result))).toBe(
      text({
        list: [
          { id: 1, v: 'A' },
          { id: 2, v: 'B' },
        ],
      }),
    )
  })

  it('an array where one item lacks an id is one value: edits on both sides are a conflict of the whole array', () => {
    const base: Json = { list: [{ id: 'a', v: 1 }, { v: 2 }] }
    const result = mergeJson(
      base,
      { list: [{ id: 'a', v: 9 }, { v: 2 }] },
      { list: [{ id: 'a', v: 1 }, { v: 8 }] },
    )
    expect(result.conflicts.map((leaf) => leaf.path)).toEqual(['/list'])
    expect(text(result.local)).toBe(text({ list: [{ id: 'a', v: 9 }, { v: 2 }] }))
    expect(text(result.remote)).toBe(text({ list: [{ id: 'a', v: 1 }, { v: 8 }] }))
  })

  it('an array of plain values, null among them, is one value', () => {
    const result = mergeJson({ list: [null, 1] }, { list: [null, 2] }, { list: [null, 3] })
    expect(result.conflicts).toEqual([
      { path: '/list', base: [null, 1], local: [null, 2], remote: [null, 3] },
    ])
  })

  it('an id array both sides added keeps the items of both', () => {
    const result = mergeJson({}, { list: [{ id: 'b', v: 1 }] }, { list: [{ id: 'a', v: 2 }] })
    expect(result.conflicts).toEqual([])
    expect(text(mergedOf(result))).toBe(
      text({
        list: [
          { id: 'a', v: 2 },
          { id: 'b', v: 1 },
        ],
      }),
    )
  })

  it('an item deleted on one side and edited on the other: the deleting side has no hole where it was', () => {
    const base = {
      list: [
        { id: 'a', v: 1 },
        { id: 'b', v: 1 },
      ],
    }
    const result = mergeJson(
      base,
      { list: [{ id: 'a', v: 1 }] },
      {
        list: [
          { id: 'a', v: 1 },
          { id: 'b', v: 2 },
        ],
      },
    )
    expect(result.conflicts).toEqual([
      { path: '/list/b', base: { id: 'b', v: 1 }, remote: { id: 'b', v: 2 } },
    ])
    expect(result.local).toEqual({ list: [{ id: 'a', v: 1 }] })
    expect(result.remote).toEqual({
      list: [
        { id: 'a', v: 1 },
        { id: 'b', v: 2 },
      ],
    })
  })
})

describe('a multilingual value', () => {
  it('each language is one leaf, even when its value is an object', () => {
    const result = mergeJson(
      { t: { _multilingual: true, en: { a: 1, b: 1 } } },
      { t: { _multilingual: true, en: { a: 2, b: 1 } } },
      { t: { _multilingual: true, en: { a: 1, b: 2 } } },
    )
    expect(result.conflicts.map((leaf) => leaf.path)).toEqual(['/t/en'])
  })

  it('one side making a value multilingual is enough to make its languages leaves', () => {
    const result = mergeJson(
      { t: { en: { a: 1, b: 1 } } },
      { t: { _multilingual: true, en: { a: 2, b: 1 } } },
      { t: { en: { a: 1, b: 2 } } },
    )
    expect(result.conflicts.map((leaf) => leaf.path)).toEqual(['/t/en'])
  })

  it('an object that is not multilingual merges inside', () => {
    const result = mergeJson(
      { t: { en: { a: 1, b: 1 } } },
      { t: { en: { a: 2, b: 1 } } },
      { t: { en: { a: 1, b: 2 } } },
    )
    expect(text(mergedOf(result))).toBe(text({ t: { en: { a: 2, b: 2 } } }))
  })
})

describe('which paths are one leaf', () => {
  const definition = (label: string, editor: string) => ({ label, editor })
  const doc = (title: Json, other: Json) => ({
    fields: { properties: { title } },
    other: { a: { b: other } },
  })

  it("a schema's field definition is one leaf: two edits inside it are a conflict", () => {
    const result = mergeItem(
      schemaCodec,
      doc(definition('Title', 'text'), 1),
      doc(definition('Heading', 'text'), 1),
      doc(definition('Title', 'rich'), 1),
    )
    expect(result.conflicts.map((leaf) => leaf.path)).toEqual(['/fields/properties/title'])
  })

  it('a schema merges inside anything else three levels deep', () => {
    const result = mergeItem(
      schemaCodec,
      doc(1, { x: 1, y: 1 }),
      doc(1, { x: 2, y: 1 }),
      doc(1, { x: 1, y: 2 }),
    )
    expect(result.conflicts).toEqual([])
    expect(result.local).toEqual(doc(1, { x: 2, y: 2 }))
  })

  it('another kind merges inside a `fields` object like any other', () => {
    const result = mergeItem(
      formCodec,
      doc(definition('Title', 'text'), 1),
      doc(definition('Heading', 'text'), 1),
      doc(definition('Title', 'rich'), 1),
    )
    expect(result.conflicts).toEqual([])
    expect(result.local).toEqual(doc(definition('Heading', 'rich'), 1))
  })
})

describe('what the merged documents hold', () => {
  it('the server making a value multilingual makes its languages leaves too', () => {
    const result = mergeJson(
      { t: { en: { a: 1, b: 1 } } },
      { t: { en: { a: 2, b: 1 } } },
      { t: { _multilingual: true, en: { a: 1, b: 2 } } },
    )
    expect(result.conflicts.map((leaf) => leaf.path)).toEqual(['/t/en'])
  })

  it('a key deleted on one side and untouched on the other is no key of the result at all', () => {
    const result = mergeJson({ a: 1, b: 1, c: 1 }, { a: 2, b: 1 }, { a: 1, b: 2, c: 1 })
    expect(Object.keys(result.local as object)).toEqual(['a', 'b'])
    expect(Object.keys(result.remote as object)).toEqual(['a', 'b'])
    // A delete against an edit: the deleting side holds no key for it, not one without a value.
    const conflict = mergeJson({ a: 1, b: 1 }, { a: 1 }, { a: 1, b: 2 })
    expect(Object.keys(conflict.local as object)).toEqual(['a'])
  })

  it('an item both sides added at the same place is in the array once', () => {
    const result = mergeJson(
      { list: [{ id: 'a', v: 1 }] },
      {
        list: [
          { id: 'a', v: 2 },
          { id: 'c', v: 3 },
        ],
      },
      {
        list: [
          { id: 'a', v: 1 },
          { id: 'c', v: 3 },
        ],
      },
    )
    expect(text(mergedOf(result))).toBe(
      text({
        list: [
          { id: 'a', v: 2 },
          { id: 'c', v: 3 },
        ],
      }),
    )
  })

  it('a conflicting leaf names only the sides that hold it', () => {
    const added = mergeJson({}, { a: 1 }, { a: 2 })
    expect(added.conflicts).toStrictEqual([{ path: '/a', local: 1, remote: 2 }])
    const deletedHere = mergeJson({ a: 1 }, {}, { a: 2 })
    expect(deletedHere.conflicts).toStrictEqual([{ path: '/a', base: 1, remote: 2 }])
    const deletedThere = mergeJson({ a: 1 }, { a: 3 }, {})
    expect(deletedThere.conflicts).toStrictEqual([{ path: '/a', base: 1, local: 3 }])
  })
})
