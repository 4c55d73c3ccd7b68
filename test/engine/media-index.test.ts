// media.yaml is read line by line when it is in the form cms-sync writes, and by the YAML
// library otherwise. Both readings must agree on every text: the same index, or the same error.

import { expect, test } from 'vitest'
import { parse } from 'yaml'
import { mediaIndexText, parseMediaIndex, scalar } from '../../src/workspace/media-index.js'

/** The index or the error message, whichever the text gives. */
function outcome(text: string): Map<string, string> | string {
  try {
    return parseMediaIndex(text)
  } catch (error) {
    return (error as Error).message
  }
}

/** The same text with CRLF line ends: never the canonical form, so the YAML library reads it. */
const viaYaml = (text: string) => outcome(text.replaceAll('\n', '\r\n'))

const CASES = [
  '',
  '# only the header\n',
  'a.png: x\n',
  'folder/a.png: 3f2a9c\nfolder/b.png: 62d3cf5dba7ba395\n',
  '"a b.png": x\n"caf\\u00e9.png": "id 2"\n',
  '"tab\\there.png": x\n',
  'a.png: 12345\n',
  'a.png: 0x1F\n',
  'a.png: 0o17\n',
  'a.png: 1e5\n',
  'a.png: 1.\n',
  'a.png: 007\n',
  'a.png: true\nb.png: False\n',
  'a.png: Null\n',
  'a.png: null\n',
  '_a.png: _x\n',
  'a.png: x\na.png: y\n',
  'a.png: x\nb.png: x\n',
  '../b.png: y\n',
  'a.png: "x"\nb.png: \'y\'\n',
  'a.png: x # a comment\n',
  '"\\x41.png": x\n',
  '__proto__: x\n',
  '1: x\n2: y\n',
  'a.png: x\n\n# later\nb.png: y\n',
]

test.each(CASES)('%j reads the same line by line as with the YAML library', (text) => {
  expect(outcome(text)).toEqual(viaYaml(text))
})

test('random plain scalars made of number, boolean and null characters read the same both ways', () => {
  const alphabet = '0123456789eExo._-+/aflsTtrueFALSNnul'
  let seed = 7
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed % n
  }
  const word = () => Array.from({ length: 1 + random(6) }, () => alphabet[random(alphabet.length)]).join('')
  for (let i = 0; i < 500; i++) {
    const text = `${word()}: ${word()}\n`
    expect(outcome(text), text).toEqual(viaYaml(text))
  }
})

test('what cms-sync writes reads back as the same index', () => {
  const index = new Map([
    ['images/logo.png', '3f2a9c'],
    ['a b/c.png', '12345'],
    ['true', 'null'],
    ['x.png', '0x1F'],
  ])
  const text = mediaIndexText(index)
  expect(parseMediaIndex(text)).toEqual(index)
  expect(viaYaml(text)).toEqual(index)
})

test('a scalar is written plain exactly when the YAML parser reads it back as itself', () => {
  // The writer asks the parser's schema instead of parsing each scalar: its answers must be the
  // parser's, for texts made to look like numbers, booleans, nulls, dates and paths.
  const alphabet = '0123456789eExXoO._-+/:aflsTtrueFALSNnulyYoOinf'
  let seed = 11
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed % n
  }
  const word = () => Array.from({ length: 1 + random(8) }, () => alphabet[random(alphabet.length)]).join('')
  const fixed = ['true', 'True', 'TRUE', 'false', 'null', 'Null', 'NULL', 'yes', 'no', 'on', 'off', 'y', 'n']
  const more = [
    '1e5',
    '1.',
    '007',
    '0x1F',
    '0o17',
    '+1',
    '-1',
    '.5',
    '2026-11-27',
    'images/a.png',
    '_x',
    'NaN',
  ]
  for (const text of [...fixed, ...more, ...Array.from({ length: 3000 }, word)]) {
    let readsBack = false
    try {
      readsBack = parse(text) === text
    } catch {
      // Not a plain scalar at all: quoted.
    }
    const written = scalar(text)
    expect(written === text, text).toBe(readsBack && /^[A-Za-z0-9_][A-Za-z0-9._/-]*$/.test(text))
    expect(parse(written), text).toBe(text)
  }
})
