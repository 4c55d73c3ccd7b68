import { defineConfig } from 'vitest/config'

// The reliability suite (docs/reliability.md): long fault sessions, kill -9 loops, hostile
// servers. Kept apart from `npm test` so that stays quick; RELIABILITY_SCALE=ci|full sizes it.
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    globalSetup: ['test/reliability/build-once.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The CLI treats CI=true as a CI job (a token needs CMS_SYNC_SERVER beside it): the tests that
    // mean a CI job set CI themselves, the rest must not inherit the machine's.
    env: { CI: '' },
    // The tests measure request rates and kill processes: one file at a time keeps timing honest.
    fileParallelism: false,
  },
})
