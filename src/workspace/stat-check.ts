// The stat of every file in the synced folders, kept from one look to the next, so that `watch`
// learns on every poll which paths moved since the last one (size, mtime, inode or type) without
// reading any file. An edit whose OS event was lost (an overflowed queue, a network file system,
// a watcher restart) so costs at most one poll, not the wait for the next deep rescan, and a
// quiet poll costs one readdir per folder and one lstat per file.
//
// It is on the idle daemon's path every poll (10 s by default), for every file, so the per-file
// work is kept to the lstat itself: names are kept per folder (no path string is built for a file
// that did not move), the ignore rules are asked once per name, and the loop yields to the event
// loop every few thousand files so that 100,000 files do not hold up the watcher's events.

import { type Dirent, lstatSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { FOLDER_OF, isBytes, type Kind } from './kinds.js'
import { absolute } from './layout.js'

/** Files stated between two yields to the event loop (about 10 ms of work). */
const FILES_PER_SLICE = 2_000

interface Seen {
  size: number
  mtimeMs: number
  ino: number
  mode: number
  /** The look that last found it (entries a look did not find are gone). */
  look: number
  /** The ignore rules leave it out: never stated, never reported. */
  ignored: boolean
}

export interface StatLook {
  /** Paths added, changed or gone since the previous look (at most `limit` of them). */
  moved: Set<string>
  /** More than `limit` paths moved: `moved` holds only the first ones. */
  overflow: boolean
}

export interface StatWatch {
  /**
   * Looks at every file and tells what moved since the previous look. The first look (and the
   * first after `forget`) has nothing to compare with: every file counts as moved.
   */
  look(limit: number): Promise<StatLook>
  /** Drops what was seen (the ignore rules changed): the next look starts afresh. */
  forget(): void
}

export function watchStats(
  root: string,
  kinds: Iterable<Kind>,
  ignored: (path: string, isDir: boolean) => boolean,
): StatWatch {
  const roots = [...kinds].map((kind) => ({ folder: FOLDER_OF[kind], recursive: isBytes(kind) }))
  /** Per folder (workspace-relative), its entries by name. */
  let folders = new Map<string, Map<string, Seen>>()
  let look = 0

  async function lookAt(limit: number): Promise<StatLook> {
    look += 1
    const moved = new Set<string>()
    let overflow = false
    let sinceYield = 0
    const note = (path: string) => {
      if (moved.size < limit) moved.add(path)
      else overflow = true
    }
    // The file's workspace-relative path is built only when it is reported.
    const relOf = (folder: string, name: string) => (folder === '' ? name : `${folder}/${name}`)
    const stated = (seen: Map<string, Seen>, folder: string, name: string, abs: string) => {
      const info = lstatSync(abs, { throwIfNoEntry: false })
      let entry = seen.get(name)
      if (entry === undefined) {
        // Gone between the readdir and the lstat (or no media.yaml): nothing to remember.
        if (info === undefined) return
        entry = { size: 0, mtimeMs: 0, ino: 0, mode: 0, look, ignored: ignored(relOf(folder, name), false) }
        seen.set(name, entry)
        if (entry.ignored) return
        note(relOf(folder, name))
      } else {
        entry.look = look
        if (entry.ignored) return
        if (info === undefined) {
          seen.delete(name)
          note(relOf(folder, name))
          return
        }
        if (
          entry.size !== info.size ||
          entry.mtimeMs !== info.mtimeMs ||
          entry.ino !== info.ino ||
          entry.mode !== info.mode
        )
          note(relOf(folder, name))
      }
      entry.size = info.size
      entry.mtimeMs = info.mtimeMs
      entry.ino = info.ino
      entry.mode = info.mode
    }

    async function folder(rel: string, recursive: boolean): Promise<void> {
      const abs = absolute(root, rel)
      let entries: Dirent[]
      try {
        entries = await readdir(abs, { withFileTypes: true })
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === 'ENOENT' || code === 'ENOTDIR') return
        throw error
      }
      let seen = folders.get(rel)
      if (seen === undefined) {
        seen = new Map()
        folders.set(rel, seen)
      }
      const subfolders: string[] = []
      for (const entry of entries) {
        const name = entry.name
        if (entry.isDirectory()) {
          const known = seen.get(name)
          // A file that became a folder moved; a folder is remembered with mode 0.
          if (known !== undefined && known.mode !== 0 && !known.ignored) note(`${rel}/${name}`)
          if (known !== undefined && known.mode === 0) known.look = look
          else seen.set(name, { size: 0, mtimeMs: 0, ino: 0, mode: 0, look, ignored: false })
          if (recursive) {
            const sub = `${rel}/${name}`
            if (!ignored(sub, true)) subfolders.push(sub)
          }
          continue
        }
        const known = seen.get(name)
        if (known?.ignored) {
          known.look = look
          continue
        }
        stated(seen, rel, name, `${abs}/${name}`)
        if (++sinceYield >= FILES_PER_SLICE) {
          sinceYield = 0
          await new Promise((resolve) => setImmediate(resolve))
        }
      }
      for (const sub of subfolders) await folder(sub, true)
    }

    for (const { folder: rel, recursive } of roots) await folder(rel, recursive)
    const index = folders.get('') ?? new Map<string, Seen>()
    folders.set('', index)
    stated(index, '', 'media.yaml', absolute(root, 'media.yaml'))

    // What this look did not find is gone: a file deleted, or every file of a folder gone.
    for (const [rel, seen] of folders) {
      for (const [name, entry] of seen) {
        if (entry.look === look) continue
        seen.delete(name)
        if (!entry.ignored && entry.mode !== 0) note(relOf(rel, name))
      }
      if (seen.size === 0 && rel !== '') folders.delete(rel)
    }
    return { moved, overflow }
  }

  return {
    look: lookAt,
    forget: () => {
      folders = new Map()
    },
  }
}
