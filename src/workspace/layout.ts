// Where things live inside a workspace (design.md "Workspace layout"). Paths in state, plans
// and output are workspace-relative with forward slashes, the same on every platform.

import path from 'node:path'
import { encodeId } from './file-names.js'
import { FOLDER_OF, type Kind } from './kinds.js'

export const SYNC_DIR = '.cms-sync'

export function itemPath(kind: Kind, id: string): string {
  return `${FOLDER_OF[kind]}/${encodeId(id)}.json`
}

const PLAIN_RELATIVE = /^(?!\.\.?(?:\/|$))(?:[^/\\]+\/(?!\.\.?(?:\/|$)))*[^/\\]+$/

/**
 * A workspace-relative path in its plain form: '/'-separated, no empty, '.' or '..' part, no
 * backslash, no leading or trailing '/'. Such a path needs no normalising before use.
 */
export function isPlainRelative(relativePath: string): boolean {
  return PLAIN_RELATIVE.test(relativePath)
}
const normalisedRoots = new Map<string, string>()

export function absolute(root: string, relativePath: string): string {
  // A scan joins tens of thousands of paths to one root: normalise the root once.
  if (path.sep === '/' && isPlainRelative(relativePath)) {
    let base = normalisedRoots.get(root)
    if (base === undefined) {
      // The root as path.join leaves it before a plain segment ('' for '.', '/a/' for '/a').
      base = path.join(root, 'x').slice(0, -1)
      normalisedRoots.set(root, base)
    }
    return base + relativePath
  }
  return path.join(root, ...relativePath.split('/'))
}

export function syncDirPath(root: string, ...parts: string[]): string {
  return path.join(root, SYNC_DIR, ...parts)
}
