// Finding the workspace needs only the file system; kept light for every command's start-up.

import { access } from 'node:fs/promises'
import path from 'node:path'

export const CONFIG_FILE = 'cms-sync.yaml'

/** The nearest folder, from `startDir` upward, that holds cms-sync.yaml. */
export async function findWorkspaceRoot(startDir: string): Promise<string | undefined> {
  let dir = path.resolve(startDir)
  for (;;) {
    try {
      await access(path.join(dir, CONFIG_FILE))
      return dir
    } catch {
      const parent = path.dirname(dir)
      if (parent === dir) return undefined
      dir = parent
    }
  }
}
