// .cms-sync/trash/ is pruned by age (cms-sync.yaml retention.trashDays, at least 30 days): each
// run keeps what it replaced or deleted in a folder of its own (trash/<run>/), and a folder goes
// once nothing in it was written for that many days. Age is the newest mtime inside, so a folder
// a long run still writes to, or a file put back by hand, is never old.

import { lstat, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { syncDirPath } from './layout.js'

const DAY_MS = 24 * 60 * 60 * 1000

/** Whether anything at `file` (a folder: anything within it) was written after `cutoff`. */
async function touchedAfter(file: string, cutoff: number): Promise<boolean> {
  const info = await lstat(file)
  if (info.mtimeMs >= cutoff) return true
  if (!info.isDirectory()) return false
  for (const name of await readdir(file)) if (await touchedAfter(path.join(file, name), cutoff)) return true
  return false
}

/** Deletes what trash/ holds that is older than `days` days; returns the names deleted. */
export async function pruneTrash(root: string, days: number, now = Date.now()): Promise<string[]> {
  const trash = syncDirPath(root, 'trash')
  const cutoff = now - days * DAY_MS
  const removed: string[] = []
  // Through a symbolic link (a committed .cms-sync link), "trash" is someone else's folder.
  for (const folder of [syncDirPath(root), trash]) {
    const info = await lstat(folder).catch(() => undefined)
    if (!info?.isDirectory()) return removed
  }
  const names = await readdir(trash).catch(() => [] as string[])
  for (const name of names) {
    const entry = path.join(trash, name)
    try {
      if (await touchedAfter(entry, cutoff)) continue
      await rm(entry, { recursive: true, force: true })
      removed.push(name)
    } catch {
      // Gone meanwhile, or unreadable: kept; the next run tries again.
    }
  }
  return removed
}
