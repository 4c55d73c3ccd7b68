// printable(): what every human printer shows of a path or message (src/util/printable.ts).

import { expect, test } from 'vitest'
import { watchPrinter } from '../../src/cli/watch-output.js'
import { prettyLine } from '../../src/log/pretty-lines.js'
import { printable } from '../../src/util/printable.js'

const plain = { dim: (s: string) => s, red: (s: string) => s, yellow: (s: string) => s } as never

test('control characters, separators and bidirectional controls are escaped; the rest is left as it is', () => {
  expect(printable('a\n::error::x\r\t\u0000\u001b[2K\u007f\u009b\u2028\u202e\u2066z')).toBe(
    'a\\n::error::x\\r\\t\\u0000\\u001b[2K\\u007f\\u009b\\u2028\\u202e\\u2066z',
  )
  expect(printable('content/café ✓/日本.json')).toBe('content/café ✓/日本.json')
  // A message made of lines keeps them; each line is escaped
  expect(printable('one\u001b]\ntwo', { keepLines: true })).toBe('one\\u001b]\ntwo')
})

test('the terminal log line and the watch line escape what a file name brings', () => {
  const line = prettyLine(
    JSON.stringify({ level: 30, time: 0, msg: 'applied\n::error::m', path: 'content/a\n::error::p.json' }),
    plain,
  )
  expect(line.trimEnd().split('\n')).toHaveLength(1)
  expect(line).toContain('applied\\n::error::m')
  let shown = ''
  const sink = { write: (text: string) => (shown += text) }
  const print = watchPrinter({ stdout: sink, stderr: sink } as never, {} as never)
  print({ event: 'pushed', action: 'push', path: 'content/x\n::error::w.json' } as never)
  expect(shown.trimEnd().split('\n')).toHaveLength(1)
  expect(shown).toContain('content/x\\n::error::w.json')
})

test("watch's line for a push reverted on the server is printed, its leaves' pointers escaped", () => {
  let shown = ''
  const sink = { write: (text: string) => (shown += text) }
  const print = watchPrinter({ stdout: sink, stderr: sink } as never, {} as never)
  // A reverted event's leaves carry a pointer (a conflict's carry a path): printing it once
  // killed the daemon with an internal error.
  print({
    event: 'reverted',
    path: 'content/a.json',
    leaves: [{ pointer: '/properties/x\n::error::y', ours: 'Fourth text', server: 'Third text' }],
    trash: '.cms-sync/trash/t/content/a.json',
  })
  expect(shown.trimEnd().split('\n')).toHaveLength(1)
  expect(shown).toContain(
    'reverted on the server content/a.json: /properties/x\\n::error::y (ours "Fourth text", now "Third text")',
  )
})
