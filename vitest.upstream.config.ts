import { defineConfig } from 'vitest/config'

// The contract suite against the real upstream server (test/upstream, `npm run test:upstream`).
// The server is one process shared by every file: one file at a time, each with a fresh project.
export default defineConfig({
  test: {
    include: ['test/upstream/**/*.test.ts'],
    globalSetup: ['test/upstream/global-setup.ts'],
    // Generous: the server and the CLI share a machine that may be busy; a step is seconds when not.
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The CLI treats CI=true as a CI job (a token needs CMS_SYNC_SERVER beside it): the tests that
    // mean a CI job set CI themselves, the rest must not inherit the machine's.
    env: { CI: '' },
    fileParallelism: false,
  },
})
