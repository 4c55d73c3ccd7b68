// firstDuplicateKey (src/workspace/duplicate-keys.ts): the key an object of valid JSON repeats.

import { expect, test } from 'vitest'
import { firstDuplicateKey } from '../src/workspace/duplicate-keys.js'

test.each([
  ['no object repeats a key', '{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}', undefined],
  ['a key twice at the top', '{"a":1,"a":2}', { key: 'a', offset: 7 }],
  ['nested, after an array', '[{"k":"a,\\"b"},{"k":1,"k":2}]', { key: 'k', offset: 22 }],
  ['spelled with an escape', '{"title":1,"\\u0074itle":2}', { key: 'title', offset: 11 }],
  ['brackets and quotes inside strings are text', '{"s":"{\\"a\\":1,\\"a\\":2}","t":"}"}', undefined],
  ['the same key in sibling objects', '{"x":{"id":1},"y":{"id":2}}', undefined],
])('%s', (_name, text, expected) => {
  JSON.parse(text)
  expect(firstDuplicateKey(text)).toEqual(expected)
})
