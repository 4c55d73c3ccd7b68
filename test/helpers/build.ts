// Tests that spawn the built CLI need dist/ to match src/: build (scripts/build.mjs) only when a
// source file is newer.

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

const ROOT = path.resolve(import.meta.dirname, '../..')
export const MAIN_JS = path.join(ROOT, 'dist/cli/main.js')

function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs)
  }
  return newest
}

export function ensureBuilt(): void {
  if (!fs.existsSync(MAIN_JS) || newestMtime(path.join(ROOT, 'src')) > fs.statSync(MAIN_JS).mtimeMs) {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: 'inherit' })
  }
}

/** Each project loads this file anew, so whether it has been said lives on the process. */
const TOLD = Symbol.for('cms-sync.tests.told')

/**
 * vitest globalSetup: one build before any test file runs, so no two files build at once. Each
 * project of the config (vitest.config.ts) calls it; the first call builds and says what comes.
 */
export default function setup(): void {
  const global = globalThis as { [TOLD]?: boolean }
  if (global[TOLD]) return
  global[TOLD] = true
  // What a newcomer running `npm test` for the first time wants to know before the first result.
  process.stderr.write(
    'cms-sync tests: a few minutes (7½ on a busy 2-core machine); each file is listed as it ' +
      'finishes, the slowest first, and the timing tests run last, alone (README "Run the tests").\n',
  )
  ensureBuilt()
}
