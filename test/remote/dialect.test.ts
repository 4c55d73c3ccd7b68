// How each dialect's error answers are read: the quirks of docs/api-dialects.md as a table,
// asked of each dialect's capability row.

import { expect, test } from 'vitest'
import { CAPABILITIES } from '../../src/remote/capabilities.js'
import { parseRetryAfterMs } from '../../src/remote/retry.js'

test.each([
  ['spec', 401, 'Not logged in', 'unauthorized', false],
  ['spec', 403, 'Admin only', 'forbidden', false],
  ['spec', 404, 'Content "x" was not found', 'not-found', true],
  ['spec', 404, 'Project "p" could not be found', 'not-found', false],
  ['spec', 400, 'Field "sort" must be a number', 'rejected', false],
  ['spec', 409, 'The id "x" is taken', 'rejected', false],
  ['spec', 413, 'Body too large', 'too-large', false],
  ['upstream', 404, 'Content by id "x" was not found', 'not-found', true],
  ['upstream', 404, 'Schema "x" could not be found', 'not-found', true],
  ['upstream', 404, "Cannot read properties of null (reading 'id')", 'unauthorized', false],
  ['upstream', 404, "Cannot read property 'id' of null", 'unauthorized', false],
  ['upstream', 404, 'This type of content is not allowed here', 'rejected', false],
  ['upstream', 404, 'Cannot GET /api/demo/live/schema', 'not-found', false],
  ['upstream', 400, 'Project "p" could not be found', 'not-found', false],
  ['upstream', 400, 'Environment "e" was not found for project "p"', 'not-found', false],
  ['upstream', 400, 'You need to be admin to do that', 'forbidden', false],
  ['upstream', 403, 'Invalid password', 'forbidden', false],
] as const)('%s %i %s -> %s (missing item: %s)', (dialect, status, text, code, missing) => {
  expect(CAPABILITIES[dialect].errors.classify(status, text)).toBe(code)
  expect(CAPABILITIES[dialect].errors.itemMissing(status, text)).toBe(missing)
})

test('Retry-After: seconds, HTTP dates, and nonsense', () => {
  const now = Date.parse('2026-11-22T03:00:00Z')
  expect(parseRetryAfterMs('2', now)).toBe(2000)
  expect(parseRetryAfterMs('Sun, 22 Nov 2026 03:00:05 GMT', now)).toBe(5000)
  expect(parseRetryAfterMs('Sun, 22 Nov 2026 02:00:00 GMT', now)).toBe(0)
  expect(parseRetryAfterMs('soon', now)).toBeUndefined()
  expect(parseRetryAfterMs(undefined, now)).toBeUndefined()
})
