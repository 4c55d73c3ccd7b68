// A failed listing is a safety stop (exit 4) that says nothing was changed, once: the client's
// listing error (code 'listing') says it already, any other failure gets it added. The stop
// asks the cause's code, not its words.

import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { type EngineDeps, planRun, SafetyStopError } from '../../src/engine/plan-and-apply.js'
import { ExitCode } from '../../src/errors/exit-codes.js'
import { remoteError } from '../../src/remote/errors.js'
import { CODECS } from '../../src/workspace/codecs.js'
import type { Kind } from '../../src/workspace/kinds.js'
import { SECTION_SCHEMA } from '../helpers/fixtures.js'
import { MemoryRemote, silentLogger } from '../helpers/memory-remote.js'

async function stopOf(failure: Error): Promise<SafetyStopError> {
  const remote = new MemoryRemote()
  remote.seed('schema', SECTION_SCHEMA)
  const list = remote.list.bind(remote)
  remote.list = async (kind: Kind) => {
    if (kind === 'content') throw failure
    return list(kind)
  }
  const deps: EngineDeps = {
    root: await mkdtemp(path.join(tmpdir(), 'listing-stop-')),
    target: { server: 'http://memory', project: 'demo', environment: 'live' },
    client: remote,
    logger: silentLogger,
    codecs: CODECS,
    maxDeletePercent: 50,
  }
  const stop = await planRun(deps, {}).then(
    () => undefined,
    (error: unknown) => error,
  )
  expect(stop).toBeInstanceOf(SafetyStopError)
  expect((stop as SafetyStopError).exitCode).toBe(ExitCode.safetyStop)
  return stop as SafetyStopError
}

test("the client's listing error says nothing was changed itself: the stop does not repeat it", async () => {
  const failure = remoteError('listing', 'could not list content, so nothing was changed: bad JSON', {
    method: 'GET',
    route: '/api/demo/live/content',
  })
  const stop = await stopOf(failure)
  expect(stop.message).toMatch(/^safety stop: the server's content listing failed \(could not list content/)
  expect(stop.message.match(/nothing was changed/g)).toHaveLength(2) // the cause's own two
  expect(stop.message.endsWith('; nothing was changed)')).toBe(false)
  expect(stop.message.endsWith('check the server and try again)')).toBe(true)
})

test('any other failure of a listing gets "nothing was changed" added', async () => {
  const stop = await stopOf(new Error('the socket closed'))
  expect(stop.message).toBe(
    "safety stop: the server's content listing failed (the socket closed); nothing was changed",
  )
})

test('words alone do not count: a failure that only mentions it still gets it added', async () => {
  const stop = await stopOf(new Error('a proxy said: nothing was changed'))
  expect(stop.message.endsWith('(a proxy said: nothing was changed); nothing was changed')).toBe(true)
})
