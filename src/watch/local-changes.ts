// The local half of `watch`: chokidar events only mark workspace-relative paths dirty; after a
// quiet spell one batch goes to the caller, which runs the same plan-and-execute path as `push`.
// Nothing here reads a file, calls the API or keeps a timer per file, so 10,000 files stay cheap.
//
// Event kinds are deliberately thrown away: an editor's atomic save (temp write + rename), vim's
// backup dance (rename to x~, write, unlink x~) and an unlink followed by an add all leave the same
// path in the dirty set, and the engine looks at what is on disk. Counts of events vary between
// chokidar versions, so only the set of paths matters (node20-deps.md pitfall 5).

import type { Stats } from 'node:fs'
import path from 'node:path'
import { type FSWatcher, watch } from 'chokidar'
import { IGNORE_FILE_NAME, type IgnoreRules, isSyncedPath } from '../workspace/ignore-rules.js'

/** A constant stream of events (a build tool rewriting a file) still flushes this often. */
const MAX_WAIT_IN_DEBOUNCES = 20
const MIN_MAX_WAIT_MS = 2_000
/** Past this many paths the watcher reports a flood (syncthing's aggregator scans all past 512). */
export const DEFAULT_MAX_BATCH_BEFORE_FLOOD = 512
/** A flood is collected until quiet so a whole `git checkout` is judged at once, but not forever. */
const FLOOD_HARD_CAP_MS = 30_000

export interface LocalBatchInfo {
  /** Paths whose last event was a deletion (a subset of the batch); the mass-change guard counts them. */
  deleted: ReadonlySet<string>
  /** More paths than maxBatchBeforeFlood: the caller should scan everything rather than these paths. */
  flood: boolean
}

export interface WatchWorkspaceOptions {
  debounceMs: number
  ignoreRules: IgnoreRules
  onBatch: (paths: Set<string>, info: LocalBatchInfo) => void | Promise<void>
  onError: (error: unknown) => void
  /**
   * `.cmsyncignore` was created, edited or deleted. Folders it used to ignore were never crawled,
   * so swapping rules in place is not enough: reload them, restart the watcher, run a full scan.
   */
  onIgnoreFileChange?: () => void
  maxBatchBeforeFlood?: number
  /** Longest a batch waits while events keep coming; default max(2 s, 20 debounces). */
  maxWaitMs?: number
}

export interface WorkspaceWatcher {
  /** Resolves once the initial crawl is done and every event after it will be seen. */
  readonly ready: Promise<void>
  /** Milliseconds from start to ready (undefined until ready). */
  readonly timeToReadyMs: number | undefined
  /** Delivers what is pending now instead of waiting for the debounce (shutdown, tests). */
  flush(): void
  /** Stops watching; pending paths are dropped (the next start-up reconcile finds them). */
  close(): Promise<void>
}

export function watchWorkspace(root: string, options: WatchWorkspaceOptions): WorkspaceWatcher {
  const absoluteRoot = path.resolve(root)
  const maxWaitMs = options.maxWaitMs ?? Math.max(MIN_MAX_WAIT_MS, options.debounceMs * MAX_WAIT_IN_DEBOUNCES)
  const floodAt = options.maxBatchBeforeFlood ?? DEFAULT_MAX_BATCH_BEFORE_FLOOD
  const startedAt = performance.now()
  let timeToReadyMs: number | undefined
  let closed = false

  let dirty = new Set<string>()
  let deleted = new Set<string>()
  let firstEventAt = 0
  let quietTimer: NodeJS.Timeout | undefined

  const watcher: FSWatcher = watch(absoluteRoot, {
    ignoreInitial: true, // the start-up reconcile scans everything; the watcher only reports what follows
    followSymlinks: false, // a link must never lead a push to files outside the workspace
    atomic: true, // chokidar folds unlink + add within 100 ms into one change
    persistent: true,
    ignored: (absolutePath: string, stats?: Stats) => isIgnored(absolutePath, stats),
  })

  function isIgnored(absolutePath: string, stats?: Stats): boolean {
    const rel = path.relative(absoluteRoot, absolutePath)
    if (rel === '') return false
    if (rel === IGNORE_FILE_NAME) return options.onIgnoreFileChange === undefined
    if (!isSyncedPath(rel)) return true // README.md, docs/, cms-sync.yaml: not ours to watch
    // chokidar also asks before it has a stat. Then only ignore what is ignored either way, or a
    // new folder named like a temp file would never be watched; the stat-ed call decides the rest.
    if (stats === undefined)
      return options.ignoreRules.ignores(rel, false) && options.ignoreRules.ignores(rel, true)
    return options.ignoreRules.ignores(rel, stats.isDirectory())
  }

  function mark(absolutePath: string, isDeletion: boolean): void {
    if (closed) return
    const rel = path.relative(absoluteRoot, absolutePath).split(path.sep).join('/')
    if (rel === IGNORE_FILE_NAME) {
      options.onIgnoreFileChange?.()
      return
    }
    const now = performance.now()
    if (dirty.size === 0) firstEventAt = now
    dirty.add(rel)
    if (isDeletion) deleted.add(rel)
    else deleted.delete(rel)
    scheduleFlush(now)
  }

  function scheduleFlush(now: number): void {
    const waited = now - firstEventAt
    const flooding = dirty.size > floodAt
    // A steady trickle still flushes after maxWaitMs; a flood waits for quiet so it is judged whole.
    const cap = flooding ? FLOOD_HARD_CAP_MS : maxWaitMs
    const delay = Math.max(0, Math.min(options.debounceMs, cap - waited))
    if (quietTimer === undefined) quietTimer = setTimeout(flush, delay)
    else if (delay === options.debounceMs) quietTimer.refresh()
    else {
      clearTimeout(quietTimer)
      quietTimer = setTimeout(flush, delay)
    }
  }

  function flush(): void {
    if (quietTimer !== undefined) clearTimeout(quietTimer)
    quietTimer = undefined
    if (dirty.size === 0 || closed) return
    const paths = dirty
    const info: LocalBatchInfo = { deleted, flood: paths.size > floodAt }
    dirty = new Set()
    deleted = new Set()
    try {
      const result = options.onBatch(paths, info)
      if (result instanceof Promise) result.catch(options.onError)
    } catch (error) {
      options.onError(error)
    }
  }

  // Only files are marked: chokidar reports each file of a folder that appears or disappears.
  watcher.on('add', (p) => mark(p, false))
  watcher.on('change', (p) => mark(p, false))
  watcher.on('unlink', (p) => mark(p, true))
  watcher.on('error', (error) => options.onError(error))

  const ready = new Promise<void>((resolve) => {
    watcher.once('ready', () => {
      timeToReadyMs = performance.now() - startedAt
      resolve()
    })
  })

  return {
    ready,
    get timeToReadyMs() {
      return timeToReadyMs
    },
    flush,
    async close() {
      closed = true
      if (quietTimer !== undefined) clearTimeout(quietTimer)
      await watcher.close()
    },
  }
}
