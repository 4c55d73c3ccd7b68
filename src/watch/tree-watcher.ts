// Which files of a workspace changed, from @parcel/watcher: native, one OS watch per folder
// (inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows), so 100,000 files take
// a few watches where chokidar took one per file (docs/watch.md has the measurements).
//
// Events only say "look at this name"; what is on disk decides (one lstat): a file there is
// changed, a file gone is deleted. Two gaps in what the library reports are filled here, both
// seen in docs/watch.md's trial: a folder that appears (created, or moved in from outside) comes
// as one `create` of the folder, without the files written into it, so it is listed and its
// files reported; and a folder renamed or moved away comes as one `delete` of the folder alone,
// so the names of each folder's files are kept (an index built by one crawl at start-up and kept
// up by the events) and every file it held is reported deleted. Event counts and kinds, which
// differ between platforms and editors, never matter.

import { type Dirent, readdirSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import parcelWatcher from '@parcel/watcher'
import { absolute as absoluteIn, SYNC_DIR } from '../workspace/layout.js'
import { lstatOrNothing } from '../workspace/local-file.js'

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
  close(): Promise<void>
}

interface Folder {
  /**
   * Names of the files (and links) in it, as last seen, ignored ones too: asking the ignore
   * rules about every name would add much to the time to ready (docs/benchmarks.md, "Figures
   * behind code comments"); they are asked when a name is reported.
   */
  files: Set<string>
  /** Names of the folders in it that are indexed. */
  folders: Set<string>
}

const join = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`)
const parentOf = (rel: string) => {
  const slash = rel.lastIndexOf('/')
  return slash < 0 ? '' : rel.slice(0, slash)
}
const baseOf = (rel: string) => rel.slice(rel.lastIndexOf('/') + 1)

/** Never watched by the OS even when they appear later: a checkout or an install there wakes nothing. */
const ALWAYS_UNWATCHED = ['.git', 'node_modules', SYNC_DIR]

export function watchTree(root: string, options: TreeWatcherOptions): TreeWatcher {
  const absoluteRoot = path.resolve(root)
  const index = new Map<string, Folder>()
  let closed = false

  const absolute = (rel: string) => absoluteIn(absoluteRoot, rel)
  const relative = (abs: string) => path.relative(absoluteRoot, abs).split(path.sep).join('/')

  function folderAt(rel: string): Folder {
    let folder = index.get(rel)
    if (!folder) {
      folder = { files: new Set(), folders: new Set() }
      index.set(rel, folder)
      if (rel !== '') folderAt(parentOf(rel)).folders.add(baseOf(rel))
    }
    return folder
  }

  function report(rel: string, exists: boolean): void {
    if (!closed && !options.ignored(rel, false)) options.onPath(rel, exists)
  }

  /** Lists a folder into the index, and its folders below; `reportNew` reports each file not known yet. */
  async function crawl(rel: string, reportNew: boolean): Promise<void> {
    let entries: Dirent[]
    try {
      entries = await readdir(absolute(rel), { withFileTypes: true })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') options.onError(error)
      return
    }
    if (closed) return
    const folder = folderAt(rel)
    const below: Promise<void>[] = []
    for (const entry of entries) {
      const child = join(rel, entry.name)
      if (entry.isDirectory()) {
        if (options.ignored(child, true)) continue
        folderAt(child)
        below.push(crawl(child, reportNew))
      } else if (!folder.files.has(entry.name)) {
        folder.files.add(entry.name)
        if (reportNew) report(child, true)
      }
    }
    await Promise.all(below)
  }

  /** A folder is gone (or became a file): its files are reported deleted and leave the index. */
  function forgetFolder(rel: string): void {
    const folder = index.get(rel)
    if (!folder) return
    index.delete(rel)
    for (const name of folder.folders) forgetFolder(join(rel, name))
    for (const name of folder.files) report(join(rel, name), false)
    if (rel !== '') index.get(parentOf(rel))?.folders.delete(baseOf(rel))
  }

  /** `forgotten`: folders this batch of events found gone, whose own children's events may follow. */
  function onEvent(rel: string, forgotten: Set<string>): void {
    if (rel === '' || rel.startsWith('..')) return
    const stat = lstatOrNothing(absolute(rel))
    const parent = index.get(parentOf(rel))
    const name = baseOf(rel)
    if (stat?.isDirectory()) {
      if (parent?.files.delete(name)) report(rel, false)
      if (options.ignored(rel, true)) return
      folderAt(rel)
      crawl(rel, true).catch(options.onError)
      return
    }
    if (index.has(rel)) {
      forgetFolder(rel)
      forgotten.add(rel)
      if (!stat) return
    }
    if (stat) {
      folderAt(parentOf(rel)).files.add(name)
      report(rel, true)
    } else if (!forgotten.has(parentOf(rel)) || parent?.files.has(name)) {
      parent?.files.delete(name)
      report(rel, false)
    } else {
      forgotten.add(rel) // a folder below one gone: its files were reported with it
    }
  }

  // The top-level folders ignored now are left out of the OS watch itself (docs/, a build
  // folder); a change of .cmsyncignore restarts the watcher, which looks again.
  const unwatched = new Set(ALWAYS_UNWATCHED)
  for (const entry of readdirSync(absoluteRoot, { withFileTypes: true }))
    if (entry.isDirectory() && options.ignored(entry.name, true)) unwatched.add(entry.name)

  const subscription = parcelWatcher.subscribe(
    absoluteRoot,
    (error, events) => {
      if (closed) return
      if (error) options.onError(error)
      // A folder's own event comes before those of what was in it, so a folder moved away
      // reports its files from the index before their own delete events arrive (if they do).
      const forgotten = new Set<string>()
      for (const event of events) onEvent(relative(event.path), forgotten)
    },
    { ignore: [...unwatched] },
  )
  const ready = Promise.all([subscription, crawl('', false)]).then(
    () => undefined,
    (error) => {
      options.onError(error)
    },
  )

  return {
    ready,
    async close() {
      closed = true
      index.clear()
      const active = await subscription.catch(() => undefined)
      // On Linux, unsubscribing after a watched folder was moved away can throw "Unable to
      // remove watcher: Invalid argument" (parcel-bundler/watcher#129, open): that folder's
      // inotify watch is already gone, and nothing is reported after `closed`.
      await active?.unsubscribe().catch(() => undefined)
    },
  }
}
