// The activity signal of local-changes.ts: a plain node:fs watch on each flat kind folder
// (schemas/, content/, forms/, connections/: one OS watch each), read as an activity signal
// only. It names each file as the kernel reports it, with no delay, so it can vouch that a batch
// of those folders' files is whole once they are quiet and every file it named came through.

import { type FSWatcher, lstatSync, watch as watchFolder } from 'node:fs'
import { FOLDER_OF, isBytes, KINDS } from '../workspace/kinds.js'
import { absolute } from '../workspace/layout.js'

/** The flat kind folders, each watched (not recursively) for activity. */
const FLAT_FOLDERS = KINDS.filter((kind) => !isBytes(kind)).map((kind) => FOLDER_OF[kind])

export interface ActivitySignal {
  /** When a flat folder last changed. */
  readonly lastActivityAt: number
  /** A file right inside a flat folder whose activity is watched. */
  covers(rel: string): boolean
  /** Starts the signal on each flat kind folder there is. */
  listenAll(): void
  /** Starts the signal on a flat kind folder; one missing (or not a folder) is not covered. */
  listen(folder: string): void
  /** The path came through the library: no longer awaited. */
  delivered(rel: string): void
  /**
   * Whether the signal vouches for what it heard: its folders still the ones it watches, and
   * every name it gave delivered (or given up on after the delivery gap).
   */
  heardAll(now: number): boolean
  close(): void
}

export function startActivitySignal(
  root: string,
  s: {
    /** How long the library may take to deliver a path (SOURCE_DELIVERY_GAP_MS). */
    gapMs: number
    ignored: (rel: string, isDir: boolean) => boolean
    closed: () => boolean
    /** Whether the path is in the batch gathering already. */
    inBatch: (rel: string) => boolean
    /** A flat folder changed. */
    onActivity: (now: number) => void
  },
): ActivitySignal {
  let lastActivityAt = Number.NEGATIVE_INFINITY
  let unnamedActivityAt = Number.NEGATIVE_INFINITY
  /** What the signal named that is not delivered yet, and when. */
  const awaiting = new Map<string, number>()
  /** The flat folders under the signal, with the inode each had when its watch began. */
  const signalled = new Map<string, { watcher: FSWatcher; ino: number }>()

  function onActivity(folder: string, name: string | null): void {
    if (s.closed()) return
    const now = performance.now()
    lastActivityAt = now
    if (name === null) unnamedActivityAt = now
    else {
      const rel = `${folder}/${name}`
      // A name the library will deliver (what the scan would see) and has not yet, for this batch.
      if (rel.endsWith('.json') && !s.inBatch(rel) && !s.ignored(rel, false)) awaiting.set(rel, now)
    }
    s.onActivity(now)
  }

  function listen(folder: string): void {
    if (s.closed() || signalled.has(folder) || !FLAT_FOLDERS.includes(folder) || s.ignored(folder, true))
      return
    const abs = absolute(root, folder)
    const info = lstatSync(abs, { throwIfNoEntry: false })
    if (!info?.isDirectory()) return
    try {
      const watcher = watchFolder(abs, { persistent: false }, (_event, name) =>
        onActivity(folder, name === null ? null : String(name)),
      )
      watcher.on('error', () => unsignal(folder))
      signalled.set(folder, { watcher, ino: info.ino })
    } catch {
      // Gone meanwhile, or no watch left (ENOSPC): its files wait the delivery gap.
    }
  }

  function unsignal(folder: string): void {
    signalled.get(folder)?.watcher.close()
    signalled.delete(folder)
  }

  return {
    get lastActivityAt() {
      return lastActivityAt
    },
    covers(rel) {
      const slash = rel.indexOf('/')
      return slash > 0 && rel.indexOf('/', slash + 1) === -1 && signalled.has(rel.slice(0, slash))
    },
    listenAll() {
      for (const folder of FLAT_FOLDERS) listen(folder)
    },
    listen,
    delivered: (rel) => void awaiting.delete(rel),
    heardAll(now) {
      // A folder removed (or replaced) under its watch is no longer heard: its files wait again.
      for (const [folder, { ino }] of signalled)
        if (lstatSync(absolute(root, folder), { throwIfNoEntry: false })?.ino !== ino) {
          unsignal(folder)
          return false
        }
      if (now - unnamedActivityAt < s.gapMs) return false
      for (const [rel, at] of awaiting) {
        if (now - at < s.gapMs) return false
        awaiting.delete(rel)
      }
      return true
    },
    close() {
      for (const folder of [...signalled.keys()]) unsignal(folder)
    },
  }
}
