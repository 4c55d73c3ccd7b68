// The local side of media: every file under media/, with the sha256 of its bytes. A file whose
// size, mtime and inode equal the stat cache keeps the hash of the last sync and is not read;
// any other file is hashed as a stream (never held whole in memory).

import { createHash } from 'node:crypto'
import { createReadStream, lstatSync, statSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'
import { isReservedName } from './file-names.js'
import { FOLDER_OF } from './kinds.js'
import type { KnownFile, StatSnapshot } from './known-file.js'
import { absolute } from './layout.js'
import { sameStat } from './local-file.js'
import { mediaPathProblem } from './media-index.js'
import type { ScanProblem } from './scan.js'

export interface LocalMediaFile {
  /** Relative to media/. */
  rel: string
  sha256: string
  size: number
  stat: StatSnapshot
}

const MEDIA = FOLDER_OF.media

export async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256')
  await pipeline(createReadStream(file), hash)
  return hash.digest('hex')
}

export async function scanMedia(
  root: string,
  cached: (path: string) => KnownFile | undefined,
  ignored: (path: string) => boolean,
): Promise<{ files: Map<string, LocalMediaFile>; problems: ScanProblem[] }> {
  const files = new Map<string, LocalMediaFile>()
  const problems: ScanProblem[] = []
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
        // A link could point anywhere; cms-sync never follows one out of media/ into the server.
        if (entry.isSymbolicLink())
          problems.push({ kind: 'media', path, problems: ['a symbolic link; media must be plain files'] })
        continue
      }
      const problem = mediaPathProblem(child)
      if (problem) {
        problems.push({ kind: 'media', path, problems: [problem] })
        continue
      }
      files.set(child, await mediaFile(root, child, cached))
    }
  }
  await walk('')
  return { files, problems }
}

async function mediaFile(
  root: string,
  rel: string,
  cached: (path: string) => KnownFile | undefined,
): Promise<LocalMediaFile> {
  const path = `${MEDIA}/${rel}`
  // Synchronous, as in the scan of the JSON kinds: a promise per file costs more than the stat.
  const info = statSync(absolute(root, path))
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
  let dir = absolute(root, MEDIA)
  const parts = rel.split('/')
  for (const [i, part] of parts.entries()) {
    dir = `${dir}/${part}`
    let info: import('node:fs').Stats
    try {
      info = lstatSync(dir)
    } catch {
      return undefined
    }
    const last = i === parts.length - 1
    if (last ? !info.isFile() : !info.isDirectory()) return undefined
  }
  return mediaFile(root, rel, cached)
}
