import { defineConfig } from 'vitest/config'

// The tests Stryker runs against each mutant of the engine's core (stryker.config.json,
// npm run test:mutation): the engine's unit tests that reach the planner, the merge, the guards
// and the merges of a plan, in process, without the built CLI. No globalSetup: nothing here
// spawns dist/.
export default defineConfig({
  test: {
    include: [
      'test/engine/plan.test.ts',
      'test/engine/plan-edges.test.ts',
      'test/engine/promote.test.ts',
      'test/engine/publish-plan.test.ts',
      'test/engine/guards.test.ts',
      'test/engine/guard-edges.test.ts',
      'test/engine/guard-stops.test.ts',
      'test/engine/merge.test.ts',
      'test/engine/merge-edges.test.ts',
      'test/engine/merge-rules.test.ts',
      'test/engine/merge-plan.test.ts',
      'test/engine/merge-run.test.ts',
      'test/engine/merge-choices.test.ts',
      'test/engine/plan-and-apply.test.ts',
      'test/engine/form-entries-stop.test.ts',
      'test/engine/listing-stop.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    env: { CI: '' },
  },
})
