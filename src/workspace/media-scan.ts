// The local side of media: every file under media/, with the sha256 of its bytes. A file whose
// size, mtime and inode equal the stat cache keeps the hash of the last sync and is not read;
// any other file is hashed as a stream (never held whole in memory).

import { createHash } from 'node:crypto'
import { constants, lstatSync, type Stats } from 'node:fs'
import { open, readdir } from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'
import { isReservedName } from './file-names.js'
import { FOLDER_OF } from './kinds.js'
import type { KnownFile, StatSnapshot } from './known-file.js'
import { absolute } from './layout.js'
import { sameStat } from './local-file.js'
import { mediaPathProblem } from './media-index.js'
import { linkProblem, NO_FOLLOW } from './no-follow.js'
import { kindFolderProblem, type ScanProblem } from './scan.js'

export interface LocalMediaFile {
  /** Relative to media/. */
  rel: string
  sha256: string
  size: number
  stat: StatSnapshot
}

const MEDIA = FOLDER_OF.media

/** The sha256 of a file's bytes; a link in place of the file fails the read (ELOOP), never followed. */
export async function hashFile(file: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | NO_FOLLOW)
  const hash = createHash('sha256')
  // The stream closes the handle when it ends or fails.
  await pipeline(handle.createReadStream(), hash)
  return hash.digest('hex')
}

export async function scanMedia(
  root: string,
  cached: (path: string) => KnownFile | undefined,
  ignored: (path: string) => boolean,
): Promise<{ files: Map<string, LocalMediaFile>; problems: ScanProblem[] }> {
  const files = new Map<string, LocalMediaFile>()
  const problems: ScanProblem[] = []
  const unsynced = (path: string, problem: string) =>
    problems.push({ kind: 'media', path, problems: [problem], unsynced: true })
  // media/ itself a link (`media -> ~/.ssh`) or a file: nothing under it is read, every item is held.
  const folderProblem = kindFolderProblem(root, MEDIA)
  if (folderProblem !== undefined) {
    unsynced(MEDIA, folderProblem)
    return { files, problems }
  }
  const walk = async (rel: string): Promise<void> => {
    let entries: import('node:fs').Dirent[]
    try {
      entries = await readdir(absolute(root, rel ? `${MEDIA}/${rel}` : MEDIA), { withFileTypes: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      throw error
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const child = rel ? `${rel}/${entry.name}` : entry.name
      const path = `${MEDIA}/${child}`
      // media/.gitignore and the like are git's or the user's settings, never media.
      if (isReservedName(entry.name) || ignored(path)) continue
      if (entry.isDirectory()) {
        await walk(child)
        continue
      }
      if (!entry.isFile()) {
        // A link could point anywhere (a file or folder of ~/.ssh): never followed, never uploaded,
        // and its item (or every item under a linked folder) left alone on both sides.
        if (entry.isSymbolicLink()) unsynced(path, linkProblem(root, path))
        continue
      }
      const problem = mediaPathProblem(child)
      if (problem) {
        problems.push({ kind: 'media', path, problems: [problem] })
        continue
      }
      // Synchronous, as in the scan of the JSON kinds: a promise per file costs more than the stat.
      const info = lstatSync(absolute(root, path), { throwIfNoEntry: false })
      if (info === undefined) continue // gone since the listing: as if the scan came a moment later
      if (info.isSymbolicLink()) {
        unsynced(path, linkProblem(root, path))
        continue
      }
      files.set(child, await mediaFile(root, child, info, cached))
    }
  }
  await walk('')
  return { files, problems }
}

/** The file's entry from its lstat (never a link's: the callers refuse those). */
async function mediaFile(
  root: string,
  rel: string,
  info: Stats,
  cached: (path: string) => KnownFile | undefined,
): Promise<LocalMediaFile> {
  const path = `${MEDIA}/${rel}`
  const snapshot = { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino }
  const base = cached(path)
  const sha256 =
    base?.media && sameStat(base.stat, snapshot) ? base.media.sha256 : await hashFile(absolute(root, path))
  return { rel, sha256, size: info.size, stat: snapshot }
}

/**
 * One file under media/ the walk skipped (a name the built-in junk rules match) that the
 * server turns out to have: undefined when no plain file is there. A path through a link or
 * any part that is not a plain folder is not followed.
 */
export async function scanMediaFileAt(
  root: string,
  rel: string,
  cached: (path: string) => KnownFile | undefined,
): Promise<LocalMediaFile | undefined> {
  if (mediaPathProblem(rel) !== undefined) return undefined
  if (lstatSync(absolute(root, MEDIA), { throwIfNoEntry: false })?.isDirectory() !== true) return undefined
  let dir = absolute(root, MEDIA)
  const parts = rel.split('/')
  let info: Stats | undefined
  for (const [i, part] of parts.entries()) {
    dir = `${dir}/${part}`
    try {
      info = lstatSync(dir)
    } catch {
      return undefined
    }
    const last = i === parts.length - 1
    if (last ? !info.isFile() : !info.isDirectory()) return undefined
  }
  return info && mediaFile(root, rel, info, cached)
}
