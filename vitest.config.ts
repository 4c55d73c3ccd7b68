import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The reliability suite has its own config (npm run test:reliability).
    exclude: ['test/reliability/**', '**/node_modules/**'],
    // End-to-end tests start real servers and processes; give them room on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
})
