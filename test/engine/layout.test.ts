// absolute() skips path.join's normalising for plain relative paths (the scan joins tens of
// thousands of them): it must give exactly what path.join gives, for any root and any path.

import path from 'node:path'
import { expect, test } from 'vitest'
import { absolute, isPlainRelative } from '../../src/workspace/layout.js'

const ROOTS = [
  '/a/b',
  '/a/b/',
  '/a/./b',
  '/',
  '//a',
  '/a/b/..',
  '',
  '.',
  './',
  'rel/x',
  'rel/../y/',
  '..',
  '../a',
]
/** Paths with no empty, '.' or '..' part, and the rest. */
const PLAIN = ['x', 'content/node-1.json', '.x', '..x', 'x..', 'a/.b/c', 'a/..b']
const OTHER = ['x/./y', 'x/../y', '../x', './x', 'x//y', 'x/', '/x', '.', '..', '', 'x/.', 'x/..', 'a\\b']
const PATHS = [...PLAIN, ...OTHER]

test.each(ROOTS)('absolute(%j, p) equals path.join for plain and other paths', (root) => {
  for (const p of PATHS) expect(absolute(root, p), p).toBe(path.join(root, ...p.split('/')))
})

test('plain relative paths are told apart from the rest', () => {
  expect(PATHS.filter(isPlainRelative)).toEqual(PLAIN)
})
