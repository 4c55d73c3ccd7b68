// Temp files a run leaves when it is killed (kill -9, a power cut) mid-write. Writes put them
// in .cms-sync/tmp/ (util/atomic-write.ts), named `<what>-<pid>-<n>`: out of the synced folders, so
// the scan, the watcher and git never see them. The next run that takes the workspace lock
// removes every one whose process is gone, so a restart after a kill leaves the workspace as a
// clean stop does. Runs without the lock (status, diff) leave them alone:
// one may belong to the run holding the lock.
//
// Temp files beside their targets (`content/home.json.1234567890`, `cms-sync.lock.123456`), as
// a write across file systems leaves them (util/atomic-write.ts), would be committed by git: they
// are moved to .cms-sync/trash/, not deleted. The writer records each one's path in .cms-sync/tmp/
// (`sibling-<pid>-<n>`) before it makes it, so the records alone find what a killed run left: a
// run of named files reads no synced folder for them (at 100,000 files a readdir of content/ cost
// a one-file push more than its requests: docs/benchmarks.md, "After: the lock written where it
// changed"). A run of the whole workspace also looks through the
// synced folders for such names no record gives (an older version's, or write-file-atomic's).
import { lstatSync, readFileSync, realpathSync } from 'node:fs'
import { mkdir, readdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { processIsAlive } from '../util/process-alive.js'
import { FOLDER_OF, isBytes, KINDS } from './kinds.js'
import { SYNC_DIR, syncDirPath } from './layout.js'
import { linkOnPath, refuseLinks } from './no-follow.js'

export function tempDirOf(root: string): string {
  return syncDirPath(root, 'tmp')
}

/** `write-<pid>-<n>` (a file), `media-<pid>-<time>` (a run's downloads). */
const OURS = /^[a-z]+-(\d+)-/

/** Sibling temp names: util/atomic-write.ts's across file systems, and write-file-atomic's. */
const SIBLING = /^(?:.+\.json|media\.yaml|cms-sync\.lock)\.\d{5,}$/

/** A record of a temp file beside its target (util/atomic-write.ts): its content is that file's path. */
const RECORD = /^sibling-\d+-/

/** The temp file a record names, workspace-relative: only one inside the workspace, reached without a link, named as ours. */
function recordedSibling(root: string, realRoot: string, record: string): string | undefined {
  let named: string
  try {
    named = readFileSync(record, 'utf8')
  } catch {
    return undefined
  }
  // The writer records the path with links resolved; the workspace may be named through one.
  const rel = inside(root, named) ?? inside(realRoot, named)
  if (rel === undefined) return undefined
  if (!/\.\d{10}$/.test(rel) || linkOnPath(root, rel) !== undefined) return undefined
  return rel
}

/** `file` relative to `folder` (forward slashes), or undefined when it is not inside it. */
function inside(folder: string, file: string): string | undefined {
  const rel = path.relative(folder, file).split(path.sep).join('/')
  return rel === '' || rel.startsWith('../') || rel === '..' || path.isAbsolute(rel) ? undefined : rel
}

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
 * Removes what killed runs left (see above); call with the workspace lock held. `folders`: also
 * look through the synced folders for temp names no record gives (a run of the whole workspace).
 * Returns the workspace-relative paths it removed or moved to trash.
 */
export async function cleanLeftTempFiles(
  root: string,
  opts: { folders: boolean } = { folders: true },
  now = new Date(),
): Promise<string[]> {
  const cleaned: string[] = []
  const tmp = tempDirOf(root)
  // Through a linked .cms-sync/ this would delete files elsewhere.
  refuseLinks(root, `${SYNC_DIR}/tmp`)
  const realRoot = realpathSync.native(root)
  const trash = syncDirPath(root, 'trash', `${now.toISOString().replace(/[:.]/g, '-')}-left-temp-files`)
  const keep = async (rel: string) => {
    await mkdir(path.dirname(path.join(trash, rel)), { recursive: true })
    await rename(path.join(root, rel), path.join(trash, rel))
    cleaned.push(rel)
  }
  for (const name of await names(tmp)) {
    const pid = Number(OURS.exec(name)?.[1])
    if (!Number.isSafeInteger(pid) || processIsAlive(pid)) continue
    // The temp file goes before its record: a kill in between leaves the record, found again.
    const sibling = RECORD.test(name) ? recordedSibling(root, realRoot, path.join(tmp, name)) : undefined
    if (sibling !== undefined && lstatSync(path.join(root, sibling), { throwIfNoEntry: false }))
      await keep(sibling)
    await rm(path.join(tmp, name), { recursive: true, force: true })
    cleaned.push(`.cms-sync/tmp/${name}`)
  }
  if (!opts.folders) return cleaned
  const folders = ['', ...KINDS.filter((kind) => !isBytes(kind)).map((kind) => FOLDER_OF[kind])]
  for (const folder of folders) {
    for (const name of await names(path.join(root, folder))) {
      if (!SIBLING.test(name)) continue
      await keep(folder ? `${folder}/${name}` : name)
    }
  }
  return cleaned
}
