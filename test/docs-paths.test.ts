// The README and docs/ name source files, tests and scripts as the place to read next: each must
// exist, or the reader is sent to a file a refactor removed. A path from the repository root
// (src/, test/, docs/, ...) must be that file or folder; a shorter one (`remote/auth.ts`,
// `plan.ts`, `crashes.test.ts`) must be the end of some file's path. Paths of a user's workspace
// (content/home.json, cms-sync.yaml) and of the shared folder beside the repository are not ours.

import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, test } from 'vitest'

const ROOT = path.join(import.meta.dirname, '..')
const ROOTED = /^(src|test|docs|scripts|bench|example-workspace|node_modules)\//
/** A file of ours by its extension: source, tests, scripts, docs. */
const CODE = /\.(ts|mjs|cjs|js|cc|md|sh)$/
/** Files of the shared folder the docs cite by name (../shared/). */
const OUTSIDE = new Set(['design.md', 'style.md', 'cms-api-spec.md', 'upstream-server.md'])

async function docs(): Promise<string[]> {
  const names = (await readdir(path.join(ROOT, 'docs'), { recursive: true }))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name.split(path.sep).join('/')}`)
  return ['README.md', ...names]
}

/** Path-like words of a text: with a folder, or a bare file name of ours. */
function namedPaths(text: string): string[] {
  // A word right after `$` or `<...>` is a variable's or a placeholder's tail, not a path.
  const words = text.match(/(?<![$>A-Za-z0-9_.@/-])[A-Za-z0-9_.@-]+(?:\/[A-Za-z0-9_.@-]+)*\/?/g) ?? []
  return [
    ...new Set(
      words
        .map((word) => word.replace(/[.,:;]+$/, ''))
        .filter((word) => !/^[.@-]/.test(word) && !word.startsWith('path/to/'))
        .filter((word) => ROOTED.test(word) || CODE.test(word)),
    ),
  ]
}

test('every file the README and docs/ name is in the repository', async () => {
  const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n')
  const missing: string[] = []
  for (const doc of await docs()) {
    const text = await readFile(path.join(ROOT, doc), 'utf8')
    for (const named of namedPaths(text)) {
      // The shared product contract beside the repository, and the build's output (npm run build).
      if (/^(shared|upstream)\//.test(named) || OUTSIDE.has(named) || named.startsWith('dist/')) continue
      const found = ROOTED.test(named)
        ? existsSync(path.join(ROOT, named))
        : tracked.some((file) => file === named || file.endsWith(`/${named}`))
      if (!found) missing.push(`${doc}: ${named}`)
    }
  }
  expect(missing).toEqual([])
})

test('the check finds a file that is not there', () => {
  expect(namedPaths('see `src/engine/nowhere.ts` and plan.ts, not content/home.json or $X/y.sh')).toEqual([
    'src/engine/nowhere.ts',
    'plan.ts',
  ])
})
