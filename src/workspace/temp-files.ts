// Temp files a run leaves when it is killed (kill -9, a power cut) mid-write. Writes put them
// in .cms-sync/tmp/ (util/atomic-write.ts), named `<what>-<pid>-<n>`: out of the synced folders, so
// the scan, the watcher and git never see them. The next run that takes the workspace lock
// removes every one whose process is gone, so a restart after a kill leaves the workspace as a
// clean stop does. Runs without the lock (status, diff) leave them alone:
// one may belong to the run holding the lock.
//
// Temp files beside their targets (`content/home.json.1234567890`, `cms-sync.lock.123456`), as
// a write across file systems leaves them (util/atomic-write.ts), would be committed by git: those found in the synced folders are moved to .cms-sync/trash/, not deleted, since only
// their name says they are ours.

import { mkdir, readdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { processIsAlive } from '../util/process-alive.js'
import { FOLDER_OF, isBytes, KINDS } from './kinds.js'
import { SYNC_DIR, syncDirPath } from './layout.js'
import { refuseLinks } from './no-follow.js'

export function tempDirOf(root: string): string {
  return syncDirPath(root, 'tmp')
}

/** `write-<pid>-<n>` (a file), `media-<pid>-<time>` (a run's downloads). */
const OURS = /^[a-z]+-(\d+)-/

/** Sibling temp names: util/atomic-write.ts's across file systems, and write-file-atomic's. */
const SIBLING = /^(?:.+\.json|media\.yaml|cms-sync\.lock)\.\d{5,}$/

async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return []
    throw error
  }
}

/**
 * Removes what killed runs left (see above); call with the workspace lock held. Returns the
 * workspace-relative paths it removed or moved to trash.
 */
export async function cleanLeftTempFiles(root: string, now = new Date()): Promise<string[]> {
  const cleaned: string[] = []
  const tmp = tempDirOf(root)
  // Through a linked .cms-sync/ this would delete files elsewhere.
  refuseLinks(root, `${SYNC_DIR}/tmp`)
  for (const name of await names(tmp)) {
    const pid = Number(OURS.exec(name)?.[1])
    if (!Number.isSafeInteger(pid) || processIsAlive(pid)) continue
    await rm(path.join(tmp, name), { recursive: true, force: true })
    cleaned.push(`.cms-sync/tmp/${name}`)
  }
  const trash = syncDirPath(root, 'trash', `${now.toISOString().replace(/[:.]/g, '-')}-left-temp-files`)
  const folders = ['', ...KINDS.filter((kind) => !isBytes(kind)).map((kind) => FOLDER_OF[kind])]
  for (const folder of folders) {
    for (const name of await names(path.join(root, folder))) {
      if (!SIBLING.test(name)) continue
      const rel = folder ? `${folder}/${name}` : name
      await mkdir(path.join(trash, folder), { recursive: true })
      await rename(path.join(root, folder, name), path.join(trash, folder, name))
      cleaned.push(rel)
    }
  }
  return cleaned
}
