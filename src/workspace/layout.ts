// Where things live inside a workspace (design.md "Workspace layout"). Paths in state, plans
// and output are workspace-relative with forward slashes, the same on every platform.

import path from 'node:path'
import { encodeId } from './file-names.js'
import { FOLDER_OF, type Kind } from './kinds.js'

export const SYNC_DIR = '.cms-sync'

export function itemPath(kind: Kind, id: string): string {
  return `${FOLDER_OF[kind]}/${encodeId(id)}.json`
}

export function absolute(root: string, relativePath: string): string {
  return path.join(root, ...relativePath.split('/'))
}

export function syncDirPath(root: string, ...parts: string[]): string {
  return path.join(root, SYNC_DIR, ...parts)
}
