import { expect, test } from 'vitest'
import { causeChain, findCause } from '../../src/errors/find-cause.js'

class Marked extends Error {}

const wrapped = (inner: unknown, times: number): unknown =>
  times === 0 ? inner : new Error(`wrapper ${times}`, { cause: wrapped(inner, times - 1) })

test('the chain is the error first, then each cause, ending at a cause that is no Error', () => {
  const root = new Error('root', { cause: 'a string, not an error' })
  const chain = causeChain(new Error('outer', { cause: new Error('middle', { cause: root }) }))
  expect(chain.map((e) => e.message)).toEqual(['outer', 'middle', 'root'])
  expect(causeChain('not an error')).toEqual([])
  expect(causeChain(undefined)).toEqual([])
})

test('findCause finds the error itself or one behind it, by what it is', () => {
  const marked = new Marked('the one')
  expect(findCause(marked, (e) => e instanceof Marked)).toBe(marked)
  expect(findCause(wrapped(marked, 2), (e) => e instanceof Marked)).toBe(marked)
  expect(findCause(wrapped(new Error('other'), 2), (e) => e instanceof Marked)).toBeUndefined()
})

test('the first match from the outside wins', () => {
  const inner = new Marked('inner')
  const outer = new Marked('outer', { cause: inner })
  expect(findCause(outer, (e) => e instanceof Marked)?.message).toBe('outer')
})

test('a chain is followed five errors deep, or as deep as asked; a loop ends', () => {
  const deep = new Marked('deep')
  expect(findCause(wrapped(deep, 4), (e) => e instanceof Marked)).toBe(deep)
  expect(findCause(wrapped(deep, 5), (e) => e instanceof Marked)).toBeUndefined()
  expect(findCause(wrapped(deep, 1), (e) => e instanceof Marked, 1)).toBeUndefined()
  expect(findCause(wrapped(deep, 1), (e) => e instanceof Marked, 2)).toBe(deep)
  const loop = new Error('a')
  loop.cause = new Error('b', { cause: loop })
  expect(causeChain(loop)).toHaveLength(5)
  expect(findCause(loop, (e) => e instanceof Marked)).toBeUndefined()
})
