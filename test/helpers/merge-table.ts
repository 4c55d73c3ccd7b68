// The merge table (README "How edits on both sides merge"): one row per case, the three sides
// in, the merged document or the conflicting leaves out. test/engine/merge.test.ts runs each
// row through the pure merge, test/engine/merge-plan.test.ts through the engine's plan.

import type { ConflictLeaf, Json } from '../../src/engine/merge/merge-json.js'
import type { Kind } from '../../src/workspace/kinds.js'

export type J = Record<string, Json>
export interface MergeRow {
  name: string
  kind?: Kind
  base: J
  local: J
  remote: J
  /** The merged document (compared with key order), or the conflicting leaves. */
  merged?: J
  conflicts?: ConflictLeaf[]
}

const ml = (en: string, de: string) => ({ _multilingual: true, en, de })

export const MERGE_TABLE: MergeRow[] = [
  {
    name: 'disjoint leaves',
    base: { title: 'A', sort: 1 },
    local: { title: 'B', sort: 1 },
    remote: { title: 'A', sort: 2 },
    merged: { title: 'B', sort: 2 },
  },
  {
    name: 'same leaf, same value',
    base: { title: 'A', sort: 1 },
    local: { title: 'B', sort: 1 },
    remote: { title: 'B', sort: 3 },
    merged: { title: 'B', sort: 3 },
  },
  {
    name: 'same leaf, different values',
    base: { title: 'A', sort: 1 },
    local: { title: 'B', sort: 1 },
    remote: { title: 'C', sort: 2 },
    conflicts: [{ path: '/title', base: 'A', local: 'B', remote: 'C' }],
  },
  {
    name: 'one language each',
    base: { properties: { title: ml('Hello', 'Hallo') } },
    local: { properties: { title: ml('Hello', 'Servus') } },
    remote: { properties: { title: ml('Hi', 'Hallo') } },
    merged: { properties: { title: ml('Hi', 'Servus') } },
  },
  {
    name: 'same language, different values',
    base: { properties: { title: ml('Hello', 'Hallo') } },
    local: { properties: { title: ml('Hello', 'Servus') } },
    remote: { properties: { title: ml('Hello', 'Moin') } },
    conflicts: [{ path: '/properties/title/de', base: 'Hallo', local: 'Servus', remote: 'Moin' }],
  },
  {
    name: 'a language is one leaf, even when it holds an object',
    base: { seo: { _multilingual: true, en: { title: 'A', description: 'a' } } },
    local: { seo: { _multilingual: true, en: { title: 'B', description: 'a' } } },
    remote: { seo: { _multilingual: true, en: { title: 'A', description: 'b' } } },
    conflicts: [
      {
        path: '/seo/en',
        base: { title: 'A', description: 'a' },
        local: { title: 'B', description: 'a' },
        remote: { title: 'A', description: 'b' },
      },
    ],
  },
  {
    name: 'add vs add of different keys',
    base: { a: 1 },
    local: { a: 1, b: 2 },
    remote: { a: 1, c: 3 },
    merged: { a: 1, b: 2, c: 3 },
  },
  {
    name: 'add vs add of the same key, different values',
    base: { a: 1 },
    local: { a: 1, b: 2 },
    remote: { a: 1, b: 3 },
    conflicts: [{ path: '/b', local: 2, remote: 3 }],
  },
  {
    name: 'key delete vs edit',
    base: { a: 1, b: 2 },
    local: { a: 1 },
    remote: { a: 1, b: 3 },
    conflicts: [{ path: '/b', base: 2, remote: 3 }],
  },
  {
    name: 'key delete vs edit of another key',
    base: { a: 1, b: 2 },
    local: { a: 1 },
    remote: { a: 5, b: 2 },
    merged: { a: 5 },
  },
  {
    name: 'reorder vs edit',
    base: { a: 1, b: 2, c: 3 },
    local: { c: 3, a: 1, b: 2 },
    remote: { a: 1, b: 20, c: 3 },
    merged: { c: 3, a: 1, b: 20 },
  },
  {
    name: 'reorder vs add: the added key follows its neighbour',
    base: { a: 1, b: 2, c: 3 },
    local: { c: 3, b: 2, a: 1 },
    remote: { a: 1, b: 2, x: 9, c: 3 },
    merged: { c: 3, b: 2, x: 9, a: 1 },
  },
  {
    name: 'two different reorders',
    base: { a: 1, b: 2, c: 3 },
    local: { c: 3, a: 1, b: 2 },
    remote: { b: 2, a: 1, c: 3 },
    conflicts: [
      { path: '', base: ['a', 'b', 'c'], local: ['c', 'a', 'b'], remote: ['b', 'a', 'c'], order: true },
    ],
  },
  {
    name: 'nested objects',
    base: { settings: { publishing: { connectionId: '', delay: 0 }, menu: { show: true } } },
    local: { settings: { publishing: { connectionId: 'web', delay: 0 }, menu: { show: true } } },
    remote: { settings: { publishing: { connectionId: '', delay: 5 }, menu: { show: false } } },
    merged: { settings: { publishing: { connectionId: 'web', delay: 5 }, menu: { show: false } } },
  },
  {
    name: 'array without ids: one value, changed on one side',
    base: { tags: ['a', 'b'], sort: 1 },
    local: { tags: ['a', 'b', 'c'], sort: 1 },
    remote: { tags: ['a', 'b'], sort: 2 },
    merged: { tags: ['a', 'b', 'c'], sort: 2 },
  },
  {
    name: 'array without ids: one value, changed on both sides',
    base: { tags: ['a', 'b'] },
    local: { tags: ['a', 'b', 'c'] },
    remote: { tags: ['x', 'a', 'b'] },
    conflicts: [{ path: '/tags', base: ['a', 'b'], local: ['a', 'b', 'c'], remote: ['x', 'a', 'b'] }],
  },
  {
    name: 'array with ids: items merge by id',
    base: {
      list: [
        { id: 'a', v: 1, w: 1 },
        { id: 'b', v: 1 },
      ],
    },
    local: {
      list: [
        { id: 'a', v: 2, w: 1 },
        { id: 'b', v: 1 },
        { id: 'c', v: 1 },
      ],
    },
    remote: {
      list: [
        { id: 'a', v: 1, w: 2 },
        { id: 'b', v: 1 },
        { id: 'd', v: 1 },
      ],
    },
    merged: {
      list: [
        { id: 'a', v: 2, w: 2 },
        { id: 'b', v: 1 },
        { id: 'c', v: 1 },
        { id: 'd', v: 1 },
      ],
    },
  },
  {
    name: 'array with ids: the same item field, different values',
    base: { list: [{ id: 'a', v: 1 }] },
    local: { list: [{ id: 'a', v: 2 }] },
    remote: { list: [{ id: 'a', v: 3 }] },
    conflicts: [{ path: '/list/a/v', base: 1, local: 2, remote: 3 }],
  },
  {
    name: 'schema field added on each side',
    kind: 'schema',
    base: { id: 's', fields: { properties: { title: { label: 'Title', schemaId: 'string' } } } },
    local: {
      id: 's',
      fields: {
        properties: {
          title: { label: 'Title', schemaId: 'string' },
          intro: { label: 'Intro', schemaId: 'string' },
        },
      },
    },
    remote: {
      id: 's',
      fields: {
        properties: {
          title: { label: 'Title', schemaId: 'string' },
          image: { label: 'Image', schemaId: 'media' },
        },
      },
    },
    merged: {
      id: 's',
      fields: {
        properties: {
          title: { label: 'Title', schemaId: 'string' },
          image: { label: 'Image', schemaId: 'media' },
          intro: { label: 'Intro', schemaId: 'string' },
        },
      },
    },
  },
  {
    name: 'a schema field is one leaf',
    kind: 'schema',
    base: { id: 's', fields: { properties: { title: { label: 'Title', schemaId: 'string' } } } },
    local: { id: 's', fields: { properties: { title: { label: 'Heading', schemaId: 'string' } } } },
    remote: { id: 's', fields: { properties: { title: { label: 'Title', schemaId: 'richText' } } } },
    conflicts: [
      {
        path: '/fields/properties/title',
        base: { label: 'Title', schemaId: 'string' },
        local: { label: 'Heading', schemaId: 'string' },
        remote: { label: 'Title', schemaId: 'richText' },
      },
    ],
  },
  {
    name: 'a form input on each side',
    kind: 'form',
    base: { id: 'f', title: 'Contact', inputs: { name: { type: 'text' } } },
    local: { id: 'f', title: 'Contact', inputs: { name: { type: 'text' }, email: { type: 'text' } } },
    remote: { id: 'f', title: 'Contact us', inputs: { name: { type: 'text', required: true } } },
    merged: {
      id: 'f',
      title: 'Contact us',
      inputs: { name: { type: 'text', required: true }, email: { type: 'text' } },
    },
  },
]
