import { defineConfig } from 'vitest/config'

/**
 * Files whose assertions bound a duration from above (a batch within 450 ms, a backoff within its
 * jitter, no more than N requests in any 1-second window at the server): they run after the rest,
 * one at a time, so the other files' servers and processes never decide them.
 */
const TIMING = [
  'test/watch/local-changes.test.ts',
  'test/watch/poller.test.ts',
  'test/watch/work-queue.test.ts',
  'test/remote/transport.test.ts',
]

export default defineConfig({
  test: {
    // The reliability suite and the real server's contract suite have their own configs
    // (npm run test:reliability, npm run test:upstream).
    exclude: ['test/reliability/**', 'test/upstream/**', '**/node_modules/**'],
    // Tests that spawn the built CLI need dist/ current; the build replaces dist/ as a whole.
    globalSetup: ['test/helpers/build.ts'],
    // End-to-end tests start real servers and processes; give them room on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The CLI treats CI=true as a CI job (a token needs CMS_SYNC_SERVER beside it): the tests that
    // mean a CI job set CI themselves, the rest must not inherit the machine's.
    env: { CI: '' },
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: ['test/reliability/**', 'test/upstream/**', '**/node_modules/**', ...TIMING],
          // Most of a file's time is spent waiting on a server, a spawned CLI or a watcher, not
          // on the CPU (one file at once, vitest's default on 2 cores, kept the CPU a quarter busy):
          // four files at once.
          maxWorkers: 4,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timing',
          include: TIMING,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
})
