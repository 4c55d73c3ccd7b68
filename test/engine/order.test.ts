import { expect, test } from 'vitest'
import { childrenFirst, parentsFirst } from '../../src/engine/order.js'

const tree = [
  { id: 'grandchild', parent: 'child' },
  { id: 'child', parent: 'root' },
  { id: 'other', parent: 'not-in-this-run' },
  { id: 'root', parent: undefined },
]

test('parents are written before their children', () => {
  const ids = parentsFirst(
    tree,
    (i) => i.id,
    (i) => i.parent,
  ).map((i) => i.id)
  expect(ids.indexOf('root')).toBeLessThan(ids.indexOf('child'))
  expect(ids.indexOf('child')).toBeLessThan(ids.indexOf('grandchild'))
})

test('deletes go children first', () => {
  expect(
    childrenFirst(
      tree,
      (i) => i.id,
      (i) => i.parent,
    )
      .map((i) => i.id)
      .slice(0, 1),
  ).toEqual(['grandchild'])
})

test('a parent cycle does not hang', () => {
  const cycle = [
    { id: 'a', parent: 'b' },
    { id: 'b', parent: 'a' },
  ]
  expect(
    parentsFirst(
      cycle,
      (i) => i.id,
      (i) => i.parent,
    ),
  ).toHaveLength(2)
})
