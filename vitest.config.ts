import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
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
  },
})
