// The merge where the table in merge.test.ts left a rule unguarded: arrays whose ids repeat, the
// two documents an unresolved conflict leaves (each side keeps its own value), a settled key-order
// conflict, and JSON Pointer escaping of the leaves' paths. Documents are compared as text:
// key order is part of the file.

import { describe, expect, it } from 'vitest'
import { type Json, mergedOf, mergeJson } from '../../src/engine/merge/merge-json.js'
import { pointerOf, segmentsOf } from '../../src/engine/merge/pointer.js'

const text = (value: Json | undefined) => JSON.stringify(value)

describe('arrays whose ids repeat', () => {
  it('are one value: edits on both sides are a conflict of the whole array, no item is dropped', () => {
    const base = {
      list: [
        { id: 'x', v: 1 },
        { id: 'x', v: 2 },
      ],
    }
    const local = {
      list: [
        { id: 'x', v: 1 },
        { id: 'x', v: 3 },
      ],
    }
    const remote = {
      list: [
        { id: 'x', v: 1 },
        { id: 'x', v: 2 },
        { id: 'y', v: 1 },
      ],
    }
    const result = mergeJson(base, local, remote)
    expect(result.conflicts).toEqual([
      { path: '/list', base: base.list, local: local.list, remote: remote.list },
    ])
    expect(text(result.local)).toBe(text(local))
    expect(text(result.remote)).toBe(text(remote))
  })

  it('a base without ids makes the array one value, even when both sides carry ids', () => {
    const result = mergeJson(
      { list: [{ v: 1 }] },
      { list: [{ id: 'a', v: 1 }] },
      { list: [{ id: 'b', v: 1 }] },
    )
    expect(result.conflicts.map((c) => c.path)).toEqual(['/list'])
  })
})

describe('the documents an unresolved conflict leaves', () => {
  it('each side keeps its value of the conflicting leaf and gets every merged one', () => {
    const result = mergeJson({ a: 1, b: 1, c: 1 }, { a: 2, b: 2, c: 1 }, { a: 3, b: 1, c: 3 })
    expect(result.conflicts).toEqual([{ path: '/a', base: 1, local: 2, remote: 3 }])
    expect(result.settled).toEqual([])
    expect(text(result.local)).toBe(text({ a: 2, b: 2, c: 3 }))
    expect(text(result.remote)).toBe(text({ a: 3, b: 2, c: 3 }))
    expect(mergedOf(result)).toBeUndefined()
  })

  it('a delete against an edit: the deleting side lacks the key, the editing side keeps its edit', () => {
    const result = mergeJson({ a: 1, b: 2 }, { a: 1, c: 9 }, { a: 7, b: 3 })
    expect(result.conflicts).toEqual([{ path: '/b', base: 2, remote: 3 }])
    expect(text(result.local)).toBe(text({ a: 7, c: 9 }))
    expect(text(result.remote)).toBe(text({ a: 7, b: 3, c: 9 }))
  })

  it('in an id array, each side keeps its own item and both get the other items merged', () => {
    const result = mergeJson(
      {
        list: [
          { id: 'a', v: 1 },
          { id: 'b', v: 1 },
        ],
      },
      {
        list: [
          { id: 'a', v: 2 },
          { id: 'b', v: 1 },
          { id: 'c', v: 1 },
        ],
      },
      {
        list: [
          { id: 'a', v: 3 },
          { id: 'b', v: 5 },
        ],
      },
    )
    expect(result.conflicts).toEqual([{ path: '/list/a/v', base: 1, local: 2, remote: 3 }])
    expect(text(result.local)).toBe(
      text({
        list: [
          { id: 'a', v: 2 },
          { id: 'b', v: 5 },
          { id: 'c', v: 1 },
        ],
      }),
    )
    expect(text(result.remote)).toBe(
      text({
        list: [
          { id: 'a', v: 3 },
          { id: 'b', v: 5 },
          { id: 'c', v: 1 },
        ],
      }),
    )
  })

  it('two different reorders: each side keeps its own order, merged values, and an added key beside its neighbour', () => {
    const base = { a: 1, b: 2, c: 3 }
    const result = mergeJson(base, { c: 3, a: 1, b: 2, x: 1 }, { b: 20, a: 1, c: 3 })
    expect(result.conflicts).toEqual([
      { path: '', base: ['a', 'b', 'c'], local: ['c', 'a', 'b', 'x'], remote: ['b', 'a', 'c'], order: true },
    ])
    expect(text(result.local)).toBe(text({ c: 3, a: 1, b: 20, x: 1 }))
    expect(text(result.remote)).toBe(text({ b: 20, x: 1, a: 1, c: 3 }))
  })
})

describe('settling a key-order conflict', () => {
  const base = { a: 1, b: 2, c: 3 }
  const local = { c: 3, a: 1, b: 2 }
  const remote = { b: 20, a: 1, c: 3 }

  it.each(['local', 'remote'] as const)(
    '--prefer %s takes that order on both sides, with every value merged',
    (kept) => {
      const result = mergeJson(base, local, remote, { choose: (leaf) => (leaf.order ? kept : undefined) })
      expect(result.conflicts).toEqual([])
      expect(result.settled).toEqual([
        {
          path: '',
          base: ['a', 'b', 'c'],
          local: ['c', 'a', 'b'],
          remote: ['b', 'a', 'c'],
          order: true,
          kept,
        },
      ])
      const merged = kept === 'local' ? { c: 3, a: 1, b: 20 } : { b: 20, a: 1, c: 3 }
      expect(text(mergedOf(result))).toBe(text(merged))
      expect(text(result.remote)).toBe(text(merged))
    },
  )

  it('an order conflict inside an id array settles the same way', () => {
    const ids = (...names: string[]) => names.map((id) => ({ id }))
    const result = mergeJson(
      { list: ids('a', 'b', 'c') },
      { list: ids('c', 'a', 'b') },
      { list: ids('b', 'a', 'c') },
      {
        choose: () => 'remote',
      },
    )
    expect(result.settled).toMatchObject([{ path: '/list', order: true, kept: 'remote' }])
    expect(text(mergedOf(result))).toBe(text({ list: ids('b', 'a', 'c') }))
  })
})

describe('JSON Pointer escaping (RFC 6901)', () => {
  it("a key holding / or ~ is escaped in a conflicting leaf's path", () => {
    const result = mergeJson(
      { 'a/b': 1, '~x': { 'c~1d': 1 } },
      { 'a/b': 2, '~x': { 'c~1d': 2 } },
      { 'a/b': 3, '~x': { 'c~1d': 3 } },
    )
    expect(result.conflicts.map((c) => c.path)).toEqual(['/a~1b', '/~0x/c~01d'])
  })

  it('an id holding / is escaped as a segment of an id array', () => {
    const result = mergeJson(
      { list: [{ id: 'p/q', v: 1 }] },
      { list: [{ id: 'p/q', v: 2 }] },
      { list: [{ id: 'p/q', v: 3 }] },
    )
    expect(result.conflicts.map((c) => c.path)).toEqual(['/list/p~1q/v'])
  })

  it('segments go to a pointer and back unchanged, ~ escaped first and unescaped last', () => {
    const cases: [string[], string][] = [
      [[], ''],
      [[''], '/'],
      [['a/b'], '/a~1b'],
      [['~'], '/~0'],
      [['~1'], '/~01'],
      [['/0'], '/~10'],
      [['a', '~/', 'b'], '/a/~0~1/b'],
    ]
    for (const [segments, pointer] of cases) {
      expect(pointerOf(segments)).toBe(pointer)
      expect(segmentsOf(pointer)).toEqual(segments)
    }
  })

  it('a string that does not start with / is no pointer', () => {
    expect(segmentsOf('a/b')).toBeUndefined()
  })
})
