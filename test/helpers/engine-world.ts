// The engine over a MemoryRemote in a temp folder, as the engine tests drive it: the deps each
// builds, and the options of a whole run.

import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { EngineDeps } from '../../src/engine/plan-and-apply.js'
import { CODECS } from '../../src/workspace/codecs.js'
import { SECTION_SCHEMA } from './fixtures.js'
import { MemoryRemote, silentLogger } from './memory-remote.js'

export const TARGET = { server: 'http://memory', project: 'demo', environment: 'live' }

/** A whole run: every path, written, no deletions past the guards, every problem reported. */
export const RUN_OPTIONS = {
  scope: [],
  dryRun: false,
  allowDeletes: false,
  reportScanProblems: true,
  reportRemoteProblems: true,
}

/** A new temp workspace (`<prefix>-…`), a MemoryRemote holding the section schema, and the engine's deps over both. */
export async function engineOver(
  prefix: string,
): Promise<{ root: string; remote: MemoryRemote; deps: EngineDeps }> {
  const root = await mkdtemp(path.join(tmpdir(), `${prefix}-`))
  const remote = new MemoryRemote()
  remote.seed('schema', SECTION_SCHEMA)
  const deps: EngineDeps = {
    root,
    target: TARGET,
    client: remote,
    logger: silentLogger,
    codecs: CODECS,
    maxDeletePercent: 50,
  }
  return { root, remote, deps }
}
