// The local side of the three-way comparison: every `<folder>/<encoded id>.json` of the enabled
// kinds. A file whose size, mtime and inode equal the stat cache is taken to hold the base
// content and is not read, so a status over an unchanged workspace reads no file content.

import { readdir } from 'node:fs/promises'
import { inParallel } from '../util/in-parallel.js'
import type { Codec } from './codec.js'
import { decodeId } from './file-names.js'
import { FOLDER_OF, type Kind } from './kinds.js'
import type { KnownFile, StatSnapshot } from './known-file.js'
import { absolute } from './layout.js'
import {
  hashAgainst,
  notAFile,
  OutsideWorkspaceError,
  plainFileStat,
  readLocalFile,
  sameStat,
  statForScan,
} from './local-file.js'

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
  /**
   * The path holds something that is neither an item's file nor gone (a FIFO, a folder, a file
   * that cannot be read): the run leaves its item alone on both sides. Only a file that is gone
   * is a delete.
   */
  unsynced?: true
}

async function namesIn(folder: string): Promise<string[]> {
  try {
    return (
      (await readdir(folder, { withFileTypes: true }))
        // Everything named like an item's file, FIFOs and folders too: one that is no file must not
        // look like a deleted item (scanOne reports it as not synced).
        .filter((entry) => entry.name.endsWith('.json'))
        .map((entry) => entry.name)
        .sort()
    )
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/** Changed files read at the same time: reading waits on the disk. */
const SCAN_PARALLELISM = 32

type Found = { entry?: LocalEntry; problem?: ScanProblem }

export async function scanWorkspace(
  root: string,
  codecs: readonly Codec[],
  cached: (path: string) => KnownFile | undefined,
  ignored: (path: string) => boolean = () => false,
): Promise<{ entries: LocalEntry[]; problems: ScanProblem[] }> {
  const entries: LocalEntry[] = []
  const problems: ScanProblem[] = []
  for (const codec of codecs) {
    const folder = FOLDER_OF[codec.kind]
    const paths = (await namesIn(absolute(root, folder)))
      .map((name) => ({ name, path: `${folder}/${name}` }))
      .filter(({ path }) => !ignored(path))
    // One slot per file, read back in name order. A plain file whose stat equals the cache is
    // settled on the spot (most of an unchanged workspace); the rest are read in parallel.
    const found: Found[] = new Array(paths.length)
    const toRead: number[] = []
    paths.forEach(({ name, path }, index) => {
      const settled = fromStatCache(root, codec, cached, name, path)
      if (settled) found[index] = settled
      else toRead.push(index)
    })
    await inParallel(toRead, SCAN_PARALLELISM, async (index) => {
      const { name, path } = paths[index]!
      found[index] = await scanOne(root, codec, cached, name, path)
    })
    for (const { entry, problem } of found) {
      if (entry) entries.push(entry)
      if (problem) problems.push(problem)
    }
  }
  return { entries, problems }
}

const JSON_SUFFIX = '.json'.length

function badName(codec: Codec, path: string): Found {
  return {
    problem: { kind: codec.kind, path, problems: ['the file name is not the encoded form of any id'] },
  }
}

/** The file's entry when it is a plain file the stat cache vouches for, else undefined. */
function fromStatCache(
  root: string,
  codec: Codec,
  cached: (path: string) => KnownFile | undefined,
  name: string,
  path: string,
): Found | undefined {
  const base = cached(path)
  if (!base?.stat) return undefined
  const stat = plainFileStat(root, path)
  if (!stat || !sameStat(base.stat, stat)) return undefined
  const id = decodeId(name.slice(0, -JSON_SUFFIX))
  if (id === undefined) return badName(codec, path)
  return { entry: { kind: codec.kind, id, path, hash: base.baseHash, stat } }
}

/** One file of the scan on its own (watch's edit-only runs scan just the files a batch names). */
export async function scanOne(
  root: string,
  codec: Codec,
  cached: (path: string) => KnownFile | undefined,
  name: string,
  path: string,
): Promise<Found> {
  const id = decodeId(name.slice(0, -JSON_SUFFIX))
  if (id === undefined) return badName(codec, path)
  try {
    const stat = await statForScan(root, path)
    if (!stat) {
      const what = await notAFile(root, path)
      return what
        ? notSynced(codec, path, `not a regular file (${what}); not synced until it is a file again`)
        : {}
    }
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
        hash: hashAgainst(parsed, base),
        stat,
        ...(parsed.ok ? {} : { problems: parsed.problems }),
        ...(!parsed.ok && parsed.claimsId !== undefined ? { claimsId: parsed.claimsId } : {}),
      },
    }
  } catch (error) {
    if (error instanceof OutsideWorkspaceError)
      return { problem: { kind: codec.kind, path, problems: [error.message] } }
    // Unreadable (EACCES after a chmod 000, EIO): this file alone, never the whole run.
    const code = (error as NodeJS.ErrnoException).code
    if (code === undefined) throw error
    // Gone while it was looked at: a deleted file, as if the scan had come a moment later.
    if (code === 'ENOENT') return {}
    return notSynced(codec, path, `cannot be read (${(error as Error).message}); not synced until it can`)
  }
}

function notSynced(codec: Codec, path: string, problem: string): Found {
  return { problem: { kind: codec.kind, path, problems: [problem], unsynced: true } }
}

/** The paths a scan found neither as an item's file nor gone: left alone on every side. */
export function unsyncedPaths(problems: readonly ScanProblem[]): Set<string> {
  return new Set(problems.filter((problem) => problem.unsynced).map((problem) => problem.path))
}
