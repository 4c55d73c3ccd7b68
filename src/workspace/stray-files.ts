// Files in a JSON kind's folder that no run reads: a subfolder (the folders are flat: one file
// per item, the id in the name) or a name without `.json`. Without this, a `content/blog/post.json`
// or a `content/home.JSON` sits in the workspace while status says nothing about it, as if it
// were synced. Media keeps its tree, so media/ has no strays; ignored paths are chosen, not stray.

import { readdir } from 'node:fs/promises'
import type { IgnoreRules } from './ignore-rules.js'
import { FOLDER_OF, type Kind } from './kinds.js'
import { absolute } from './layout.js'

export interface StrayFile {
  path: string
  /** Why no run reads it, and what would. */
  reason: string
}

export async function strayFiles(
  root: string,
  kinds: readonly Kind[],
  rules: Pick<IgnoreRules, 'ignores'>,
): Promise<StrayFile[]> {
  const strays: StrayFile[] = []
  for (const kind of kinds) {
    if (kind === 'media') continue
    const folder = FOLDER_OF[kind]
    const entries = await readdir(absolute(root, folder), { withFileTypes: true }).catch(() => [])
    for (const entry of entries) {
      const path = `${folder}/${entry.name}`
      if (entry.isDirectory()) {
        if (rules.ignores(path, true)) continue
        strays.push({
          path: `${path}/`,
          reason: `a folder: ${folder}/ is flat (one file per item, ${folder}/<id>.json), so nothing in it is synced`,
        })
      } else if (!entry.name.endsWith('.json') && !rules.ignores(path)) {
        strays.push({
          path,
          reason: `not synced: only ${folder}/<id>.json files are items (this name does not end in .json)`,
        })
      }
    }
  }
  return strays.sort((a, b) => (a.path < b.path ? -1 : 1))
}
