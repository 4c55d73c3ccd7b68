// The local side of the three-way comparison: every `<folder>/<encoded id>.json` of the enabled
// kinds. A file whose size, mtime and inode equal the stat cache is taken to hold the base
// content and is not read, so a status over an unchanged workspace reads no file content.

import { readdir } from 'node:fs/promises'
import type { ItemState, StatSnapshot } from '../state/state-file.js'
import type { Codec } from './codec.js'
import { decodeId } from './file-names.js'
import { FOLDER_OF, type Kind } from './kinds.js'
import { absolute } from './layout.js'
import { OutsideWorkspaceError, readLocalFile, sameStat, statLocalFile } from './local-file.js'

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
    for (const name of await namesIn(absolute(root, folder))) {
      const path = `${folder}/${name}`
      if (ignored(path)) continue
      const id = decodeId(name.slice(0, -'.json'.length))
      if (id === undefined) {
        problems.push({
          kind: codec.kind,
          path,
          problems: ['the file name is not the encoded form of any id'],
        })
        continue
      }
      try {
        const stat = await statLocalFile(root, path)
        if (!stat) continue
        const base = cached(path)
        if (base && sameStat(base.stat, stat)) {
          entries.push({ kind: codec.kind, id, path, hash: base.baseHash, stat })
          continue
        }
        const parsed = await readLocalFile(root, path, codec, id)
        if (!parsed) continue
        entries.push({
          kind: codec.kind,
          id,
          path,
          hash: parsed.hash,
          stat,
          ...(parsed.ok ? {} : { problems: parsed.problems }),
          ...(!parsed.ok && parsed.claimsId !== undefined ? { claimsId: parsed.claimsId } : {}),
        })
      } catch (error) {
        if (!(error instanceof OutsideWorkspaceError)) throw error
        problems.push({ kind: codec.kind, path, problems: [error.message] })
      }
    }
  }
  return { entries, problems }
}
