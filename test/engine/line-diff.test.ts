import { expect, test } from 'vitest'
import { unifiedDiff } from '../../src/engine/line-diff.js'

test('equal texts give no diff', () => {
  expect(unifiedDiff('a\nb\n', 'a\nb\n', 'x', 'y')).toBe('')
})

test('one changed line in the middle, with context', () => {
  const a = `${['1', '2', '3', '4', '5', '6', '7', '8', '9'].join('\n')}\n`
  const b = a.replace('5', 'five')
  expect(unifiedDiff(a, b, 'remote', 'local')).toBe(
    [
      '--- remote',
      '+++ local',
      '@@ -2,7 +2,7 @@',
      ' 2',
      ' 3',
      ' 4',
      '-5',
      '+five',
      ' 6',
      ' 7',
      ' 8',
      '',
    ].join('\n'),
  )
})

test('a new file is all additions', () => {
  expect(unifiedDiff('', 'a\nb\n', '/dev/null', 'local')).toBe(
    '--- /dev/null\n+++ local\n@@ -0,0 +1,2 @@\n+a\n+b\n',
  )
})

test('changes far apart make separate hunks', () => {
  const lines = Array.from({ length: 20 }, (_, i) => `line ${i}`)
  const changed = [...lines]
  changed[1] = 'first'
  changed[18] = 'last'
  const diff = unifiedDiff(`${lines.join('\n')}\n`, `${changed.join('\n')}\n`, 'a', 'b')
  expect(diff.match(/^@@/gm)).toHaveLength(2)
})
