// A remote error's message ends with what to do next, and the error carries that step as data
// (`hint`): a caller that says the failure in its own context drops or replaces the step by it,
// never by matching the words.

import { expect, test } from 'vitest'
import { ExitCode } from '../../src/errors/exit-codes.js'
import {
  notCmsSyncServer,
  remoteError,
  UnauthorizedError,
  withNextStep,
  withoutNextStep,
} from '../../src/remote/errors.js'

const data = { method: 'GET', route: '/api/user?token=secret', status: 401, serverMessage: 'no; run away' }

test("the step is the code's own, and the message ends with it", () => {
  const error = remoteError('unauthorized', 'the token is not valid', data)
  expect(error.hint).toBe('run `cms-sync login` or set CMS_SYNC_TOKEN')
  expect(error.message).toBe(`the token is not valid (GET /api/user -> 401: no; run away); ${error.hint}`)
  // Only the step goes, even where the server's text looks like one.
  expect(withoutNextStep(error)).toBe('the token is not valid (GET /api/user -> 401: no; run away)')
})

test('another step replaces it and keeps the rest: class, code, exit code and data', () => {
  const refused = remoteError('unauthorized', 'the server refused the login of "admin"', data)
  const error = withNextStep(refused, 'check the user name and password')
  expect(error).toBeInstanceOf(UnauthorizedError)
  expect(error).toMatchObject({
    code: 'unauthorized',
    exitCode: ExitCode.usage,
    route: '/api/user',
    status: 401,
  })
  expect(error.message).toBe(
    'the server refused the login of "admin" (GET /api/user -> 401: no; run away); check the user name and password',
  )
  expect(withoutNextStep(error)).toBe(withoutNextStep(refused))
})

test('an error whose message ends with no step is left as it is', () => {
  const foreign = notCmsSyncServer('http://localhost:8080', data)
  expect(foreign.hint).toBeUndefined()
  expect(withoutNextStep(foreign)).toBe(foreign.message)
  expect(withNextStep(foreign, 'check the user name and password')).toBe(foreign)
})
