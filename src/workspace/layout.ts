// Where things live inside a workspace (design.md "Workspace layout"). Paths in state, plans
// and output are workspace-relative with forward slashes, the same on every platform.

import path from 'node:path'
import { encodeId } from './file-names.js'
import { FOLDER_OF, type Kind } from './kinds.js'

export const SYNC_DIR = '.cms-sync'

export function itemPath(kind: Kind, id: string): string {
  return `${FOLDER_OF[kind]}/${encodeId(id)}.json`
}

const SLASH = 47
const BACKSLASH = 92
const DOT = 46

/**
 * A workspace-relative path in its plain form: '/'-separated, no empty, '.' or '..' part, no
 * backslash, no leading or trailing '/'. Such a path needs no normalising before use. One pass
 * over the characters: a run asks this of every path, and the regex it replaced backtracked.
 */
export function isPlainRelative(relativePath: string): boolean {
  const end = relativePath.length
  let start = 0
  for (let i = 0; i <= end; i++) {
    const c = i === end ? SLASH : relativePath.charCodeAt(i)
    if (c === BACKSLASH) return false
    if (c !== SLASH) continue
    const length = i - start
    if (length === 0) return false
    if (
      length <= 2 &&
      relativePath.charCodeAt(start) === DOT &&
      (length === 1 || relativePath.charCodeAt(start + 1) === DOT)
    )
      return false
    start = i + 1
  }
  return true
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
