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
