// The daemon's policy around the engine (src/watch/run-policy.ts), with a stand-in engine and a
// server whose listings never change: what a quiet poll still plans.

import { expect, test } from 'vitest'
import type { Outcome } from '../../src/engine/outcome.js'
import type { PlanItem } from '../../src/engine/plan.js'
import type { EngineDeps, PlannedRun } from '../../src/engine/plan-apply-types.js'
import { createWatchRuns } from '../../src/watch/run-policy.js'
import type { WatchEngine } from '../../src/watch/watch-engine.js'
import type { StatWatch } from '../../src/workspace/stat-check.js'

const item = (path: string, action: PlanItem['action']): PlanItem => ({
  kind: 'content',
  id: path.replace(/^content\/|\.json$/g, ''),
  path,
  local: 'modified',
  remote: action === 'push' ? 'unchanged' : 'modified',
  action,
})

/** An engine that plans what each call is given and reports what `results` says. */
function standIn(results: Array<(items: PlanItem[]) => Outcome>) {
  const planned: Array<{ paths: string[]; full: boolean }> = []
  const engine = {
    async plan(paths: ReadonlySet<string>, how: { full: boolean }) {
      planned.push({ paths: [...paths].sort(), full: how.full })
      return { plan: { items: [...paths].map((p) => item(p, 'push')) }, fresh: true } as unknown as PlannedRun
    },
    dropSavedRecords() {},
    async apply(run: PlannedRun) {
      const next = results.shift() ?? (() => ({ applied: [], conflicts: [], failed: [] }))
      return { retryPaths: [], outcome: next(run.plan.items) }
    },
  } as unknown as WatchEngine
  return { engine, planned }
}

const quietServer = {
  client: { listingUnchanged: async () => true },
  codecs: [{ kind: 'content' }],
  logger: { debug() {}, info() {}, warn() {}, error() {} },
} as unknown as Pick<EngineDeps, 'client' | 'codecs' | 'media' | 'logger'>

const nothingMoves: StatWatch = {
  look: async () => ({ moved: [], overflow: false }),
  forget() {},
} as unknown as StatWatch

const signal = new AbortController().signal

test('an item a run found changed under it (a raced write) is planned again by the next quiet poll', async () => {
  const { engine, planned } = standIn([
    () => ({ applied: [], conflicts: [], failed: [] }), // the start-up reconcile
    (items) => ({
      applied: [],
      conflicts: items.map((i) => ({
        ...i,
        action: 'conflict' as const,
        reason: 'the server copy changed since it was listed',
      })),
      failed: [],
    }),
  ])
  const runs = createWatchRuns(engine, quietServer, { stats: nothingMoves, paused: async () => false })
  await runs.run(new Set(), { full: true, signal })
  await runs.run(new Set(['content/home.json']), { full: false, signal })
  const before = planned.length
  // A poll: no file moved, every listing answers 304.
  await runs.run(new Set(), { full: true, signal })
  expect(planned.slice(before)).toEqual([{ paths: ['content/home.json'], full: false }])
})

test('a conflict the plan found (edits of the same leaf) is not planned again by a quiet poll', async () => {
  const { engine, planned } = standIn([
    () => ({ applied: [], conflicts: [], failed: [] }),
    (items) => ({
      applied: [],
      conflicts: items.map((i) => ({ ...i, action: 'conflict' as const })),
      failed: [],
    }),
  ])
  const conflicting = {
    ...engine,
    plan: async (paths: ReadonlySet<string>, how: { full: boolean }) => {
      const run = await engine.plan(paths, how)
      for (const i of run.plan.items) i.action = 'conflict'
      return run
    },
  } as WatchEngine
  const runs = createWatchRuns(conflicting, quietServer, { stats: nothingMoves, paused: async () => false })
  await runs.run(new Set(), { full: true, signal })
  await runs.run(new Set(['content/home.json']), { full: false, signal })
  const before = planned.length
  await runs.run(new Set(), { full: true, signal })
  expect(planned.length).toBe(before)
})

/** A stat watch that counts its looks and reports `moved` on the next one. */
function countingStats() {
  const counter = { looks: 0, moved: [] as string[] }
  const stats = {
    look: async () => {
      counter.looks += 1
      return { moved: new Set(counter.moved.splice(0)), overflow: false }
    },
    forget() {},
  } as unknown as StatWatch
  return { counter, stats }
}

test('while the watcher’s events are complete a quiet poll states no file; a look asked for is taken once', async () => {
  const { engine, planned } = standIn([])
  const { counter, stats } = countingStats()
  const runs = createWatchRuns(engine, quietServer, {
    stats,
    paused: async () => false,
    eventsComplete: () => true,
  })
  // The start-up reconcile has nothing to compare with: it looks.
  expect(await runs.run(new Set(), { full: true, signal })).toMatchObject({ look: { files: 'stat' } })
  const looks = counter.looks
  await runs.lookAhead()
  expect(await runs.run(new Set(), { full: true, signal })).toMatchObject({
    look: { files: 'events', moved: 0, listings: 'unchanged', planned: 'nothing' },
  })
  expect(counter.looks).toBe(looks)
  // A git operation (or a restarted watcher): the next poll states every file, the one after not.
  runs.requireLook()
  counter.moved.push('content/home.json')
  await runs.lookAhead()
  const before = planned.length
  expect(await runs.run(new Set(), { full: true, signal })).toMatchObject({
    look: { files: 'stat', moved: 1, planned: 'paths' },
  })
  expect(planned.slice(before)).toEqual([{ paths: ['content/home.json'], full: false }])
  expect(counter.looks).toBe(looks + 1)
  expect(await runs.run(new Set(), { full: true, signal })).toMatchObject({ look: { files: 'events' } })
  expect(counter.looks).toBe(looks + 1)
})

test('while the watcher’s events may be incomplete every poll states every file', async () => {
  const { engine } = standIn([])
  const { counter, stats } = countingStats()
  let complete = true
  const runs = createWatchRuns(engine, quietServer, {
    stats,
    paused: async () => false,
    eventsComplete: () => complete,
  })
  await runs.run(new Set(), { full: true, signal })
  complete = false // the watcher failed
  const looks = counter.looks
  for (let poll = 0; poll < 3; poll++)
    expect(await runs.run(new Set(), { full: true, signal })).toMatchObject({ look: { files: 'stat' } })
  expect(counter.looks).toBe(looks + 3)
})

test('a changed listing the check kept is dropped once the full run is over, even one whose plan failed before it took it', async () => {
  const steps: string[] = []
  let changed = false
  const server = {
    ...quietServer,
    client: {
      listingUnchanged: async () => {
        steps.push(changed ? 'check: changed' : 'check: unchanged')
        return !changed
      },
      forgetCheckedListings: () => steps.push('dropped'),
    },
  } as unknown as typeof quietServer
  const { engine } = standIn([])
  let failing = false
  const failingPlan = {
    ...engine,
    plan: async (paths: ReadonlySet<string>, how: { full: boolean }) => {
      steps.push('plan')
      if (failing) throw new Error('the state could not be read')
      return engine.plan(paths, how)
    },
  } as WatchEngine
  const runs = createWatchRuns(failingPlan, server, { stats: nothingMoves, paused: async () => false })
  await runs.run(new Set(), { full: true, signal }) // the start-up reconcile
  steps.length = 0
  changed = true
  failing = true
  await expect(runs.run(new Set(), { full: true, signal })).rejects.toThrow(/state could not be read/)
  expect(steps).toEqual(['check: changed', 'plan', 'dropped'])
})
