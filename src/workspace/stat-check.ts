// A fingerprint of the synced folders taken by stat alone: every file's path, size, mtime and
// inode, hashed; no file is read. `watch` takes one before each full run and compares it on
// every quiet poll, so an edit whose OS event was lost (an overflowed queue, a network file
// system, a watcher restart) costs at most one poll, not the wait for the next deep rescan.
// Open conflicts, files that cannot be synced and the like stay as they were, so they keep the
// poll quiet; anything that moved is a reason to plan again.

import { createHash, type Hash } from 'node:crypto'
import { lstatSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { FOLDER_OF, type Kind } from './kinds.js'
import { absolute } from './layout.js'

async function addFolder(
  root: string,
  folder: string,
  recursive: boolean,
  ignored: (path: string) => boolean,
  hash: Hash,
): Promise<void> {
  let names: import('node:fs').Dirent[]
  try {
    names = await readdir(absolute(root, folder), { withFileTypes: true })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return
    throw error
  }
  names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of names) {
    const rel = `${folder}/${entry.name}`
    if (ignored(rel)) continue
    if (entry.isDirectory()) {
      hash.update(`${rel}/\n`)
      if (recursive) await addFolder(root, rel, true, ignored, hash)
      continue
    }
    const info = lstatSync(absolute(root, rel), { throwIfNoEntry: false })
    hash.update(
      info ? `${rel}\0${info.size}\0${info.mtimeMs}\0${info.ino}\0${info.mode}\n` : `${rel}\0gone\n`,
    )
  }
}

/** The fingerprint of the kinds' folders (media as a tree, the others flat), and of media.yaml. */
export async function statFingerprint(
  root: string,
  kinds: Iterable<Kind>,
  ignored: (path: string) => boolean,
): Promise<string> {
  const hash = createHash('sha1')
  for (const kind of kinds) await addFolder(root, FOLDER_OF[kind], kind === 'media', ignored, hash)
  const index = lstatSync(absolute(root, 'media.yaml'), { throwIfNoEntry: false })
  if (index) hash.update(`media.yaml\0${index.size}\0${index.mtimeMs}\0${index.ino}\n`)
  return hash.digest('hex')
}
