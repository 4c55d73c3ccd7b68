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

/** vitest globalSetup: one build before any test file runs, so no two files build at once. */
export default function setup(): void {
  ensureBuilt()
}
