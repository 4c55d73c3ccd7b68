// A base's text from git, for a workspace whose .cms-sync/bases/ lacks it: a fresh clone or a
// CI checkout (its base hashes come from the committed cms-sync.lock), or a workspace synced
// before bases were kept. The file's committed versions are walked newest first, and the one
// whose canonical form hashes to the base hash is the base. Only items changed on both sides ask,
// so a run where nothing changed on both sides never starts git.

import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import type { Codec } from './codec.js'
import { parseFileText } from './local-file.js'

const run = promisify(execFile)

/** How far back a file's history is searched: a base is normally the last commit or so. */
const MAX_VERSIONS = 50

async function git(cwd: string, args: string[]): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', args, { cwd, maxBuffer: 64 * 1024 * 1024, timeout: 30_000 })
    return stdout
  } catch {
    // Not a repository, no git, an unknown path: no base from git.
    return undefined
  }
}

/**
 * The canonical text of the committed version of `relativePath` whose canonical hash is `hash`,
 * or undefined. `relativePath` is workspace-relative; the workspace may be a folder of the repo.
 */
export async function baseTextFromGit(
  root: string,
  relativePath: string,
  hash: string,
  codec: Codec,
  id: string,
): Promise<string | undefined> {
  // The versions of the file in the commits that touched it, newest first: one blob id each.
  const log = await git(root, [
    'log',
    '--format=',
    '--raw',
    '--no-abbrev',
    '--no-renames',
    `-n${MAX_VERSIONS}`,
    '--',
    relativePath.split('/').join(path.sep),
  ])
  if (!log) return undefined
  const blobs = new Set<string>()
  for (const line of log.split('\n')) {
    // :<old mode> <new mode> <old blob> <new blob> <status>\t<path>
    const fields = line.split('\t')[0]!.split(' ')
    for (const blob of [fields[3], fields[2]])
      if (blob && /^[0-9a-f]{40,64}$/.test(blob) && !/^0+$/.test(blob)) blobs.add(blob)
  }
  for (const blob of blobs) {
    const text = await git(root, ['cat-file', 'blob', blob])
    if (text === undefined) continue
    const parsed = parseFileText(codec, text, id)
    if (parsed.ok && parsed.hash === hash) return parsed.text
  }
  return undefined
}
