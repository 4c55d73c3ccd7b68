// A form file removed by hand must not take the form's entries (people's submissions, in no file)
// with it unasked: the run stops before anything is changed, --allow-deletes deletes it with the
// entries kept in trash first, and watch holds only that delete.

import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import {
  type ApplyOptions,
  applyRun,
  type EngineDeps,
  planRun,
  SafetyStopError,
  SELECT,
} from '../../src/engine/plan-and-apply.js'
import { ExitCode } from '../../src/errors/exit-codes.js'
import type { JsonObject } from '../../src/workspace/codec.js'
import { CODECS } from '../../src/workspace/codecs.js'
import { MemoryRemote, silentLogger } from '../helpers/memory-remote.js'

const form = (id: string): JsonObject => ({
  id,
  title: id,
  allowedOrigin: '',
  redirect: '',
  appendRedirect: false,
  inputs: { name: { type: 'text' } },
})

/** A server whose forms hold entries, read the way the real client reads them. */
class FormsRemote extends MemoryRemote {
  readonly entries = new Map<string, JsonObject[]>()
  async formEntries(formId: string): Promise<JsonObject[] | undefined> {
    this.calls.push(`entries ${formId}`)
    return this.items.has(`form:${formId}`) ? (this.entries.get(formId) ?? []) : undefined
  }
}

async function setup() {
  const root = await mkdtemp(path.join(tmpdir(), 'form-entries-'))
  const remote = new FormsRemote()
  // Enough forms that one delete stays under the share the delete guard counts.
  for (const id of ['contact', 'news', 'poll', 'survey']) remote.seed('form', form(id))
  remote.entries.set('contact', [{ name: 'Ann' }, { name: 'Bo' }])
  const deps: EngineDeps = {
    root,
    target: { server: 'http://memory', project: 'demo', environment: 'live' },
    client: remote,
    logger: silentLogger,
    codecs: CODECS,
    maxDeletePercent: 50,
  }
  const run = async (extra: Partial<ApplyOptions> = {}) =>
    applyRun(deps, await planRun(deps, {}), {
      scope: [],
      dryRun: false,
      allowDeletes: false,
      reportScanProblems: true,
      reportRemoteProblems: true,
      select: SELECT.sync,
      ...extra,
    })
  expect((await run()).failed).toEqual([])
  return { root, remote, run }
}

test('deleting a form that holds entries stops the run with exit 4, naming the form; nothing is deleted', async () => {
  const { root, remote, run } = await setup()
  await rm(path.join(root, 'forms/contact.json'))
  const stop = await run().then(
    () => undefined,
    (error: unknown) => error,
  )
  expect(stop).toBeInstanceOf(SafetyStopError)
  expect((stop as SafetyStopError).exitCode).toBe(ExitCode.safetyStop)
  expect((stop as SafetyStopError).rerunWith).toBe('--allow-deletes')
  expect((stop as SafetyStopError).message).toMatch(/forms\/contact\.json \(2 entries\)/)
  expect(remote.items.has('form:contact')).toBe(true)
  expect(remote.calls.filter((call) => call.startsWith('remove'))).toEqual([])
})

test('a form without entries is deleted like any item', async () => {
  const { root, remote, run } = await setup()
  await rm(path.join(root, 'forms/news.json'))
  expect((await run()).applied).toMatchObject([{ path: 'forms/news.json', action: 'delete-remote' }])
  expect(remote.items.has('form:news')).toBe(false)
})

test('--allow-deletes deletes it, the entries kept in trash first', async () => {
  const { root, remote, run } = await setup()
  await rm(path.join(root, 'forms/contact.json'))
  const outcome = await run({ allowDeletes: true })
  expect(outcome.applied).toMatchObject([{ path: 'forms/contact.json', action: 'delete-remote' }])
  expect(remote.items.has('form:contact')).toBe(false)
  const trash = path.join(root, '.cms-sync/trash')
  const kept = (await readdir(trash, { recursive: true })).filter((name) =>
    name.endsWith('contact.entries.json'),
  )
  expect(kept).toHaveLength(1)
  expect(JSON.parse(await readFile(path.join(trash, kept[0]!), 'utf8'))).toEqual([
    { name: 'Ann' },
    { name: 'Bo' },
  ])
})

test('watch holds that delete and carries out the rest', async () => {
  const { root, remote, run } = await setup()
  await rm(path.join(root, 'forms/contact.json'))
  remote.seed('form', { ...form('poll'), title: 'Poll (renamed)' })
  const outcome = await run({ holdGuarded: true })
  expect(outcome.applied).toMatchObject([{ path: 'forms/poll.json', action: 'pull' }])
  expect(outcome.held).toMatchObject([{ guard: 'form-entries', paths: ['forms/contact.json'] }])
  expect(remote.items.has('form:contact')).toBe(true)
})
