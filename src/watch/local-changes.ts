// The local half of `watch`: file events (tree-watcher.ts: @parcel/watcher, one OS watch per folder) only mark
// workspace-relative paths dirty; after a quiet spell one batch goes to the caller, which plans
// and carries out those paths. Nothing here reads a file, calls the API or keeps a timer per
// file, so 10,000 files stay cheap.
//
// When is a batch whole? @parcel/watcher hands over the first event after a quiet spell at once
// and the rest of a burst up to 500 ms later (docs/watch.md), so its deliveries alone cannot tell
// the end of a burst from a pause in it. Two more signals tell it: git's own files (a checkout, a
// stash, a reset holds the index lock from its first file to its last, git-batch.ts), and a
// plain node:fs watch on each flat kind folder (schemas/, content/, forms/, connections/: one OS
// watch each, activity-signal.ts), read as an activity signal only: it names each file as the kernel reports it,
// with no delay. A batch of such folders' files, with git not at work, is whole once those
// folders have been quiet for watch.debounceMs and every file they named has come through
// @parcel/watcher; anything else (media/, a tree, a name the signal did not give, a file the
// library has not delivered yet, git at work or HEAD moved) waits SOURCE_DELIVERY_GAP_MS as
// before, and a git operation until git is done.
//
// Event kinds are deliberately thrown away: an editor's atomic save (temp write + rename), vim's
// backup dance (rename to x~, write, unlink x~) and an unlink followed by an add all leave the same
// path in the dirty set, and the engine looks at what is on disk. Counts of events vary between
// platforms and editors, so only the set of paths matters (node20-deps.md pitfall 5).

import { IGNORE_FILE_NAME, type IgnoreRules, isSyncedPath } from '../workspace/ignore-rules.js'
import { type ActivitySignal, startActivitySignal } from './activity-signal.js'
import type { GitActivity, GitHead } from './git-activity.js'
import { type GitBatch, type GitTracker, trackGit } from './git-batch.js'
import { MASS_CHANGE_MIN_PATHS } from './mass-change.js'
import { type TreeWatcher, watchTree } from './tree-watcher.js'

export type { GitBatch } from './git-batch.js'

/**
 * Events on paths already in the batch (a build tool rewriting one file) never let the debounce go
 * quiet, so the batch flushes once no NEW path has come for this long. While new paths keep coming
 * (a git checkout, a bulk replace) the batch keeps growing until quiet, so the mass change guard
 * judges the whole operation, not slices of it that each look harmless.
 */
const MAX_WAIT_IN_DEBOUNCES = 20
const MIN_MAX_WAIT_MS = 2_000
/** Even a bulk operation is delivered after this long, so the daemon is never blind for longer. */
const BULK_HARD_CAP_MS = 30_000
/**
 * Once a batch holds more paths than an editing session makes (the mass change guard's floor), a
 * bulk operation is under way; on a busy machine its events can pause longer than the debounce,
 * so wait for this much quiet instead, or the guard would see slices of it.
 */
const BULK_QUIET_MS = 1_000
/**
 * @parcel/watcher hands over the first events after a quiet spell at once, then, while events
 * keep coming, one delivery every 500 ms (docs/watch.md). So without the activity signal no
 * batch is whole until that long has passed with nothing new: a batch flushed sooner could be
 * the head of a bulk change, pushed before the mass change guard saw the rest, or a file read
 * while a slow writer is still writing it.
 */
const SOURCE_DELIVERY_GAP_MS = 600
/** While git works, whether it is done is looked at this often. */
const GIT_RECHECK_MS = 50
/** Past this many paths the batch is a flood: scan everything (syncthing's aggregator: past 512). */
export const DEFAULT_MAX_BATCH_BEFORE_FLOOD = 512

export interface LocalBatchInfo {
  /** Paths whose last event was a deletion (a subset of the batch); the mass-change guard counts them. */
  deleted: ReadonlySet<string>
  /** More paths than maxBatchBeforeFlood: the caller should scan everything rather than these paths. */
  flood: boolean
  /** The batch came with a git operation (its index lock was held, or HEAD moved). */
  git?: GitBatch
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
  /** The git repository holding the workspace (git-activity.ts): its operations are one batch each. */
  git?: GitActivity
  /** Longest a batch waits for a new path while events on known ones keep coming; default max(2 s, 20 debounces). */
  maxWaitMs?: number
  /**
   * The batch was due and was looked at, but git is at work: it stays pending. Called at each
   * look, with the number of paths held; a caller can tell "held" from "not looked at yet".
   */
  onHeldForGit?: (paths: number) => void
  /** HEAD moved with no file changing and is taken as where the next batch starts. */
  onHeadSettled?: (head: GitHead) => void
}

export interface WorkspaceWatcher {
  /** Resolves once the initial crawl is done and every event after it will be seen. */
  readonly ready: Promise<void>
  /** Milliseconds from start to ready (undefined until ready). */
  readonly timeToReadyMs: number | undefined
  /** Paths seen but not yet delivered (a batch is gathering), or git is at work. */
  readonly pending: number
  /** Delivers what is pending now instead of waiting for the debounce (shutdown, tests). */
  flush(): void
  /** Stops watching; pending paths are dropped (the next start-up reconcile finds them). */
  close(): Promise<void>
}

/** The batch gathering: its paths and when they came. */
interface Gathering {
  paths: Set<string>
  /** Paths whose last event was a deletion. */
  deleted: Set<string>
  firstEventAt: number
  lastEventAt: number
  lastNewPathAt: number
  /** The batch holds a path outside the flat folders the activity signal covers. */
  beyondSignal: boolean
}

function gathering(): Gathering {
  return {
    paths: new Set(),
    deleted: new Set(),
    firstEventAt: 0,
    lastEventAt: 0,
    lastNewPathAt: 0,
    beyondSignal: false,
  }
}

/** A path's event, added to the batch gathering. */
function gather(
  batch: Gathering,
  rel: string,
  isDeletion: boolean,
  now: number,
  activity: ActivitySignal,
  git: GitTracker,
): void {
  if (batch.paths.size === 0) batch.firstEventAt = now
  if (!batch.paths.has(rel)) batch.lastNewPathAt = now
  git.noteEvent(now)
  batch.lastEventAt = now
  batch.paths.add(rel)
  activity.delivered(rel)
  if (!activity.covers(rel)) {
    batch.beyondSignal = true
    activity.listen(rel.slice(0, rel.indexOf('/'))) // a kind folder made after start: heard from now on
  }
  if (isDeletion) batch.deleted.add(rel)
  else batch.deleted.delete(rel)
}

/**
 * Whether the signal vouches that the batch is whole once its folders are quiet: every path
 * in the signal's folders, not a bulk change, every file the signal named delivered, git not
 * at work. A name the library never delivers (a file created and deleted at once, which it
 * coalesces away) stops vouching only for the delivery gap, after which the library would
 * have delivered it.
 */
function vouches(batch: Gathering, now: number, activity: ActivitySignal, git: GitTracker): boolean {
  if (batch.beyondSignal || batch.paths.size > MASS_CHANGE_MIN_PATHS) return false
  return activity.heardAll(now) && git.quiet(now)
}

/** The timer that delivers the batch once it is due, and then once git is done with it. */
function flushTimer(t: {
  /** When the batch may go. */
  dueAt: (now: number) => number
  /** Nothing to deliver: no batch, or the watcher is closed. */
  idle: () => boolean
  gitAtWork: (now: number) => boolean
  onHeldForGit: () => void
  flush: () => void
}): { schedule(now: number): void; cancel(): void } {
  let quietTimer: NodeJS.Timeout | undefined
  function schedule(now: number): void {
    clearTimeout(quietTimer)
    quietTimer = setTimeout(flushIfDue, Math.max(0, t.dueAt(now) - now))
  }

  /**
   * The timer is due: look again once the event loop has read what the OS has queued (timers run
   * before I/O in a loop turn, so on a busy loop the activity that would postpone the batch may
   * be waiting to be read).
   */
  function flushIfDue(): void {
    quietTimer = undefined
    setImmediate(() => {
      if (quietTimer !== undefined || t.idle()) return
      const now = performance.now()
      if (t.dueAt(now) <= now) flushWhenGitDone()
      else schedule(now)
    })
  }

  /** Delivers the batch once git is done with it; until then looks again every few ms. */
  function flushWhenGitDone(): void {
    if (!t.idle() && t.gitAtWork(performance.now())) {
      clearTimeout(quietTimer)
      quietTimer = setTimeout(flushWhenGitDone, GIT_RECHECK_MS)
      t.onHeldForGit()
      return
    }
    t.flush()
  }

  return {
    schedule,
    cancel() {
      if (quietTimer !== undefined) clearTimeout(quietTimer)
      quietTimer = undefined
    },
  }
}

export function watchWorkspace(root: string, options: WatchWorkspaceOptions): WorkspaceWatcher {
  const maxWaitMs = Math.max(
    SOURCE_DELIVERY_GAP_MS,
    options.maxWaitMs ?? Math.max(MIN_MAX_WAIT_MS, options.debounceMs * MAX_WAIT_IN_DEBOUNCES),
  )
  const floodAt = options.maxBatchBeforeFlood ?? DEFAULT_MAX_BATCH_BEFORE_FLOOD
  const startedAt = performance.now()
  let timeToReadyMs: number | undefined
  let closed = false

  let batch = gathering()
  const git = trackGit(options.git, {
    closed: () => closed,
    gathering: () => batch.paths.size > 0,
    onHeadSettled: options.onHeadSettled,
  })

  // Folders that are never synced are not even watched: README.md, docs/, .git/, node_modules/.
  const ignored = (rel: string, isDir: boolean): boolean => {
    if (rel === IGNORE_FILE_NAME) return options.onIgnoreFileChange === undefined
    if (!isSyncedPath(rel)) return true
    return options.ignoreRules.ignores(rel, isDir)
  }
  const activity = startActivitySignal(root, {
    gapMs: SOURCE_DELIVERY_GAP_MS,
    ignored,
    closed: () => closed,
    inBatch: (rel) => batch.paths.has(rel),
    onActivity: (now) => {
      if (batch.paths.size > 0) timer.schedule(now)
    },
  })

  function mark(rel: string, isDeletion: boolean): void {
    if (closed) return
    if (rel === IGNORE_FILE_NAME) {
      options.onIgnoreFileChange?.()
      return
    }
    const now = performance.now()
    gather(batch, rel, isDeletion, now, activity, git)
    timer.schedule(now)
  }

  const signalVouches = (now: number) => vouches(batch, now, activity, git)
  const timer = flushTimer({
    dueAt,
    idle: () => batch.paths.size === 0 || closed,
    gitAtWork: (now) => git.atWork(now, batch.firstEventAt),
    onHeldForGit: () => options.onHeldForGit?.(batch.paths.size),
    flush: () => flush(),
  })

  /** When the batch may go: after its quiet spell, or when waiting longer would starve the daemon. */
  function dueAt(now: number): number {
    const quietMs = signalVouches(now)
      ? options.debounceMs
      : Math.max(
          options.debounceMs,
          SOURCE_DELIVERY_GAP_MS,
          batch.paths.size > MASS_CHANGE_MIN_PATHS ? BULK_QUIET_MS : 0,
        )
    return Math.min(
      Math.max(batch.lastEventAt, activity.lastActivityAt) + quietMs,
      batch.lastNewPathAt + maxWaitMs,
      batch.firstEventAt + BULK_HARD_CAP_MS,
    )
  }

  function flush(): void {
    timer.cancel()
    if (batch.paths.size === 0 || closed) return
    const { paths, deleted } = batch
    const gitInfo = git.take()
    const info: LocalBatchInfo = {
      deleted,
      flood: paths.size > floodAt,
      ...(gitInfo ? { git: gitInfo } : {}),
    }
    batch = gathering()
    try {
      const result = options.onBatch(paths, info)
      if (result instanceof Promise) result.catch(options.onError)
    } catch (error) {
      options.onError(error)
    }
  }

  const tree: TreeWatcher = watchTree(root, {
    ignored,
    onPath: (rel, exists) => mark(rel, !exists),
    onError: (error) => options.onError(error),
  })
  activity.listenAll()
  const ready = tree.ready.then(() => {
    timeToReadyMs = performance.now() - startedAt
  })

  return {
    ready,
    get timeToReadyMs() {
      return timeToReadyMs
    },
    get pending() {
      return batch.paths.size + (git.busy() ? 1 : 0)
    },
    flush,
    async close() {
      closed = true
      timer.cancel()
      git.close()
      activity.close()
      await tree.close()
    },
  }
}
