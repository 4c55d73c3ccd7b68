// Which files of a workspace changed, from one OS watch per folder (inotify on Linux): a folder's
// watch reports every entry created, written, renamed or deleted in it, so 10,000 files in a
// few folders take a few watches, not 10,000 (chokidar watches every file: seconds to start, a
// file handle and 10 KB of memory each, and the system's watch limit at risk).
//
// Events only say "look at this name"; what is on disk decides (one lstat): a file there is
// changed, a file gone is deleted, a folder that appears is watched and its files reported
// (they may have been written before its watch was in place), a folder that goes reports every
// file it held. So event counts and kinds, which differ between platforms and editors, never
// matter. The names of each folder's files are kept for that last case.

import { type FSWatcher, lstatSync, watch } from 'node:fs'
import { readdir } from 'node:fs/promises'
import path from 'node:path'

export interface TreeWatcherOptions {
  /** Whether a workspace-relative path (forward slashes) is never watched or reported. */
  ignored: (rel: string, isDir: boolean) => boolean
  /** A file was written, created or renamed into place (exists), or deleted or renamed away. */
  onPath: (rel: string, exists: boolean) => void
  onError: (error: unknown) => void
}

export interface TreeWatcher {
  /** Resolves once every folder is watched: any change after it is reported. */
  readonly ready: Promise<void>
  close(): void
}

interface Folder {
  watcher: FSWatcher | undefined
  /**
   * Names of the files (and links) in it, as last seen, ignored ones too: asking the ignore
   * rules about 10,000 names would double the time to ready; they are asked when a name is reported.
   */
  files: Set<string>
  /** Names of the watched folders in it. */
  folders: Set<string>
}

const join = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`)

export function watchTree(root: string, options: TreeWatcherOptions): TreeWatcher {
  const absoluteRoot = path.resolve(root)
  const folders = new Map<string, Folder>()
  let closed = false
  let crawling = 0
  let resolveReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    resolveReady = resolve
  })

  const absolute = (rel: string) => (rel === '' ? absoluteRoot : path.join(absoluteRoot, ...rel.split('/')))

  /** Watches a folder, then lists it (in that order: nothing created in between is missed). */
  function addFolder(rel: string, reportFiles: boolean): void {
    if (closed || folders.has(rel)) return
    const folder: Folder = { watcher: undefined, files: new Set(), folders: new Set() }
    folders.set(rel, folder)
    try {
      folder.watcher = watch(absolute(rel), { persistent: true }, (_event, name) => onEvent(rel, name))
      folder.watcher.on('error', (error) => {
        // The folder went away under its watch (the parent's event reports its files).
        if (!existsAsFolder(rel)) removeFolder(rel, false)
        else options.onError(error)
      })
    } catch (error) {
      folders.delete(rel)
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') options.onError(error)
      return
    }
    crawling++
    void list(rel, folder, reportFiles).finally(() => {
      if (--crawling === 0) resolveReady()
    })
  }

  async function list(rel: string, folder: Folder, reportFiles: boolean): Promise<void> {
    let entries: import('node:fs').Dirent[]
    try {
      entries = await readdir(absolute(rel), { withFileTypes: true })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') removeFolder(rel, false)
      else options.onError(error)
      return
    }
    if (closed || folders.get(rel) !== folder) return
    for (const entry of entries) {
      if (entry.isDirectory()) {
        const child = join(rel, entry.name)
        if (options.ignored(child, true)) continue
        folder.folders.add(entry.name)
        addFolder(child, reportFiles)
      } else if (!folder.files.has(entry.name)) {
        folder.files.add(entry.name)
        if (reportFiles) report(join(rel, entry.name), true)
      }
    }
  }

  function report(rel: string, exists: boolean): void {
    if (!options.ignored(rel, false)) options.onPath(rel, exists)
  }

  function existsAsFolder(rel: string): boolean {
    return lstatSync(absolute(rel), { throwIfNoEntry: false })?.isDirectory() === true
  }

  /** A folder is gone (or became a file): its files are reported deleted, its watches closed. */
  function removeFolder(rel: string, reportFiles = true): void {
    const folder = folders.get(rel)
    if (!folder) return
    folders.delete(rel)
    folder.watcher?.close()
    for (const name of folder.folders) removeFolder(join(rel, name), reportFiles)
    if (reportFiles) for (const name of folder.files) report(join(rel, name), false)
    const slash = rel.lastIndexOf('/')
    folders.get(slash < 0 ? '' : rel.slice(0, slash))?.folders.delete(rel.slice(slash + 1))
  }

  function onEvent(dir: string, name: string | Buffer | null): void {
    const folder = folders.get(dir)
    if (closed || !folder) return
    if (name === null) {
      // No name (the OS dropped it): every file the folder held or holds now is reported.
      for (const file of folder.files) report(join(dir, file), false)
      folder.files.clear()
      void list(dir, folder, true)
      return
    }
    const child = join(dir, String(name))
    const stat = lstatSync(absolute(child), { throwIfNoEntry: false })
    const base = String(name)
    if (stat?.isDirectory()) {
      if (folder.files.delete(base)) report(child, false)
      if (options.ignored(child, true)) return
      folder.folders.add(base)
      addFolder(child, true)
      return
    }
    if (folders.has(child)) removeFolder(child)
    if (stat) {
      folder.files.add(base)
      report(child, true)
    } else if (folder.files.delete(base)) {
      report(child, false)
    } else if (dir !== '' && base === path.posix.basename(dir) && !existsAsFolder(dir)) {
      // An event on the watched folder itself (it was deleted or moved away).
      removeFolder(dir)
    }
  }

  addFolder('', false)
  if (crawling === 0) resolveReady()

  return {
    ready,
    close() {
      closed = true
      for (const folder of folders.values()) folder.watcher?.close()
      folders.clear()
      resolveReady()
    },
  }
}
