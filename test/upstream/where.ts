// Where the real upstream server's setup script lives. CI clones the project with the shared
// folder beside it (`<repo>/../shared`); a developer may point CMS_SYNC_SHARED anywhere; on the
// team's machines it is /work/shared. The first of these that holds upstream/setup.sh wins.

import { existsSync } from 'node:fs'
import path from 'node:path'

export const REPO = path.resolve(import.meta.dirname, '../..')

/** The candidate shared folders, in the order they are tried. */
export function sharedCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  return [
    ...(env.CMS_SYNC_SHARED ? [path.resolve(env.CMS_SYNC_SHARED)] : []),
    path.resolve(REPO, '../shared'),
    '/work/shared',
  ]
}

/** upstream/setup.sh of the first candidate that has one, or undefined. */
export function findSetupScript(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of sharedCandidates(env)) {
    const script = path.join(dir, 'upstream', 'setup.sh')
    if (existsSync(script)) return script
  }
  return undefined
}
