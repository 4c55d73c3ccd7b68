// The local side of the three-way comparison: every `<folder>/<encoded id>.json` of the enabled
// kinds. A file whose size, mtime and inode equal the stat cache is taken to hold the base
// content and is not read, so a status over an unchanged workspace reads no file content.

import { readdir } from 'node:fs/promises'
import type { ItemState, StatSnapshot } from '../state/state-file.js'
import { inParallel } from '../util/in-parallel.js'
import type { Codec } from './codec.js'
import { decodeId } from './file-names.js'
import { FOLDER_OF, type Kind } from './kinds.js'
import { absolute } from './layout.js'
import { OutsideWorkspaceError, readLocalFile, sameStat, statForScan } from './local-file.js'

export interface LocalEntry {
  kind: Kind
  id: string
  path: string
  hash: string
  stat: StatSnapshot
  /** Set when the file cannot be pushed as it is (bad JSON, wrong types, id mismatch). */
  problems?: string[]
  /** The id the file says it holds, when that differs from its name (a file renamed by hand). */
  claimsId?: string
}

/** A file that cannot stand for any item (a name no id encodes to, a link out of the workspace). */
export interface ScanProblem {
  kind: Kind
  path: string
  problems: string[]
}

async function namesIn(folder: string): Promise<string[]> {
  try {
    return (await readdir(folder, { withFileTypes: true }))
      .filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && entry.name.endsWith('.json'))
      .map((entry) => entry.name)
      .sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/** Files stat'ed (and, when changed, read) at the same time: the scan waits on the disk. */
const SCAN_PARALLELISM = 32

export async function scanWorkspace(
  root: string,
  codecs: readonly Codec[],
  cached: (path: string) => ItemState | undefined,
  ignored: (path: string) => boolean = () => false,
): Promise<{ entries: LocalEntry[]; problems: ScanProblem[] }> {
  const entries: LocalEntry[] = []
  const problems: ScanProblem[] = []
  for (const codec of codecs) {
    const folder = FOLDER_OF[codec.kind]
    const paths = (await namesIn(absolute(root, folder)))
      .map((name) => ({ name, path: `${folder}/${name}` }))
      .filter(({ path }) => !ignored(path))
    // One slot per file, filled in any order, read back in name order.
    const found: Array<{ entry?: LocalEntry; problem?: ScanProblem }> = []
    await inParallel(paths, SCAN_PARALLELISM, async ({ name, path }, index) => {
      found[index] = await scanOne(root, codec, cached, name, path)
    })
    for (const { entry, problem } of found) {
      if (entry) entries.push(entry)
      if (problem) problems.push(problem)
    }
  }
  return { entries, problems }
}

/** One file of the scan on its own (watch's edit-only runs scan just the files a batch names). */
export async function scanOne(
  root: string,
  codec: Codec,
  cached: (path: string) => ItemState | undefined,
  name: string,
  path: string,
): Promise<{ entry?: LocalEntry; problem?: ScanProblem }> {
  const id = decodeId(name.slice(0, -'.json'.length))
  if (id === undefined)
    return {
      problem: { kind: codec.kind, path, problems: ['the file name is not the encoded form of any id'] },
    }
  try {
    const stat = await statForScan(root, path)
    if (!stat) return {}
    const base = cached(path)
    if (base && sameStat(base.stat, stat))
      return { entry: { kind: codec.kind, id, path, hash: base.baseHash, stat } }
    const parsed = await readLocalFile(root, path, codec, id)
    if (!parsed) return {}
    return {
      entry: {
        kind: codec.kind,
        id,
        path,
        hash: parsed.hash,
        stat,
        ...(parsed.ok ? {} : { problems: parsed.problems }),
        ...(!parsed.ok && parsed.claimsId !== undefined ? { claimsId: parsed.claimsId } : {}),
      },
    }
  } catch (error) {
    if (!(error instanceof OutsideWorkspaceError)) throw error
    return { problem: { kind: codec.kind, path, problems: [error.message] } }
  }
}
