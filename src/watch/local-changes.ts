// The local half of `watch`: file events (tree-watcher.ts: @parcel/watcher, one OS watch per folder) only mark
// workspace-relative paths dirty; after a quiet spell one batch goes to the caller, which plans
// and carries out those paths. Nothing here reads a file, calls the API or keeps a timer per
// file, so 10,000 files stay cheap.
//
// When is a batch whole? @parcel/watcher hands over the first event after a quiet spell at once
// and the rest of a burst up to 500 ms later (docs/watch.md), so its deliveries alone cannot tell
// the end of a burst from a pause in it. Two more signals tell it: git's own files (a checkout, a
// stash, a reset holds the index lock from its first file to its last, git-activity.ts), and a
// plain node:fs watch on each flat kind folder (schemas/, content/, forms/, connections/: one OS
// watch each), read as an activity signal only: it names each file as the kernel reports it,
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

import { type FSWatcher, lstatSync, watch as watchFolder } from 'node:fs'
import { IGNORE_FILE_NAME, type IgnoreRules, isSyncedPath } from '../workspace/ignore-rules.js'
import { FOLDER_OF, isBytes, KINDS } from '../workspace/kinds.js'
import { absolute } from '../workspace/layout.js'
import { branchName, type GitActivity, type GitHead, switched } from './git-activity.js'
import { MASS_CHANGE_MIN_PATHS } from './mass-change.js'
import { type TreeWatcher, watchTree } from './tree-watcher.js'

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
/** The flat kind folders, each watched (not recursively) for activity. */
const FLAT_FOLDERS = KINDS.filter((kind) => !isBytes(kind)).map((kind) => FOLDER_OF[kind])
/**
 * Git's index lock comes and goes between the steps of one operation (a stash is several), and
 * HEAD is written just after the lock is let go: git is done once the lock has been gone this
 * long.
 */
const GIT_QUIET_MS = 200
/** While git works, whether it is done is looked at this often. */
const GIT_RECHECK_MS = 50
/** A lock left by a git that crashed is not waited on for ever: the batch goes after this long. */
const GIT_MAX_WAIT_MS = 120_000
/** HEAD moved with no file changing (a commit, `git checkout -b`): taken as the new start after this. */
const HEAD_IDLE_MS = 1_000
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

export interface GitBatch {
  /** HEAD points elsewhere than before the batch. */
  headMoved: boolean
  /** HEAD names another branch (or another detached commit): a branch switch. */
  switched: boolean
  /** The branch before and after (the short commit when detached). */
  from?: string
  to?: string
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

export function watchWorkspace(root: string, options: WatchWorkspaceOptions): WorkspaceWatcher {
  const maxWaitMs = Math.max(
    SOURCE_DELIVERY_GAP_MS,
    options.maxWaitMs ?? Math.max(MIN_MAX_WAIT_MS, options.debounceMs * MAX_WAIT_IN_DEBOUNCES),
  )
  const floodAt = options.maxBatchBeforeFlood ?? DEFAULT_MAX_BATCH_BEFORE_FLOOD
  const startedAt = performance.now()
  let timeToReadyMs: number | undefined
  let closed = false

  let dirty = new Set<string>()
  let deleted = new Set<string>()
  let firstEventAt = 0
  let lastEventAt = 0
  let lastNewPathAt = 0
  let quietTimer: NodeJS.Timeout | undefined
  /** The batch holds a path outside the flat folders the activity signal covers. */
  let beyondSignal = false
  /** The activity signal: when a flat folder last changed, and what it named that is not delivered yet. */
  let lastActivityAt = Number.NEGATIVE_INFINITY
  let unnamedActivityAt = Number.NEGATIVE_INFINITY
  const awaiting = new Map<string, number>()
  /** The flat folders under the signal, with the inode each had when its watch began. */
  const signalled = new Map<string, { watcher: FSWatcher; ino: number }>()
  const git = options.git
  /** Where HEAD pointed before the batch now gathering. */
  let headBefore: GitHead = git?.head() ?? {}
  /** When git's index lock was last seen during this batch (0: not seen). */
  let lockSeenAt = 0
  /** When anything last changed in the git folder (its index, its lock, HEAD). */
  let gitActivityAt = Number.NEGATIVE_INFINITY
  let headIdleTimer: NodeJS.Timeout | undefined
  const gitWatch = git?.watch((name) => {
    if (closed) return
    gitActivityAt = performance.now()
    if (name === 'index.lock' && dirty.size > 0) lockSeenAt = gitActivityAt
    if (name !== 'HEAD' && name !== '') return
    // HEAD moved while no file changed (a commit, a new branch): that is where the next batch starts.
    clearTimeout(headIdleTimer)
    headIdleTimer = setTimeout(() => {
      if (closed || dirty.size > 0 || git.busy()) return
      headBefore = git.head()
      options.onHeadSettled?.(headBefore)
    }, HEAD_IDLE_MS)
    headIdleTimer.unref?.()
  })

  // Folders that are never synced are not even watched: README.md, docs/, .git/, node_modules/.
  const ignored = (rel: string, isDir: boolean): boolean => {
    if (rel === IGNORE_FILE_NAME) return options.onIgnoreFileChange === undefined
    if (!isSyncedPath(rel)) return true
    return options.ignoreRules.ignores(rel, isDir)
  }

  function mark(rel: string, isDeletion: boolean): void {
    if (closed) return
    if (rel === IGNORE_FILE_NAME) {
      options.onIgnoreFileChange?.()
      return
    }
    const now = performance.now()
    if (dirty.size === 0) firstEventAt = now
    if (!dirty.has(rel)) lastNewPathAt = now
    if (git?.busy()) lockSeenAt = now
    lastEventAt = now
    dirty.add(rel)
    awaiting.delete(rel)
    if (!coveredBySignal(rel)) {
      beyondSignal = true
      signal(rel.slice(0, rel.indexOf('/'))) // a kind folder made after start: heard from now on
    }
    if (isDeletion) deleted.add(rel)
    else deleted.delete(rel)
    scheduleFlush(now)
  }

  /** A file right inside a flat folder whose activity is watched. */
  function coveredBySignal(rel: string): boolean {
    const slash = rel.indexOf('/')
    return slash > 0 && rel.indexOf('/', slash + 1) === -1 && signalled.has(rel.slice(0, slash))
  }

  function onActivity(folder: string, name: string | null): void {
    if (closed) return
    const now = performance.now()
    lastActivityAt = now
    if (name === null) unnamedActivityAt = now
    else {
      const rel = `${folder}/${name}`
      // A name the library will deliver (what the scan would see) and has not yet, for this batch.
      if (rel.endsWith('.json') && !dirty.has(rel) && !ignored(rel, false)) awaiting.set(rel, now)
    }
    if (dirty.size > 0) scheduleFlush(now)
  }

  /** Git is not at work and HEAD has not moved: no git operation is under way or just done. */
  function gitQuiet(now: number): boolean {
    if (!git) return true
    if (lockSeenAt !== 0 || now - gitActivityAt < GIT_QUIET_MS || git.busy()) return false
    const head = git.head()
    return head.ref === headBefore.ref && head.commit === headBefore.commit
  }

  /**
   * Whether the signal vouches that the batch is whole once its folders are quiet: every path
   * in the signal's folders, not a bulk change, every file the signal named delivered, git not
   * at work. A name the library never delivers (a file created and deleted at once, which it
   * coalesces away) stops vouching only for the delivery gap, after which the library would
   * have delivered it.
   */
  function signalVouches(now: number): boolean {
    if (beyondSignal || dirty.size > MASS_CHANGE_MIN_PATHS) return false
    // A folder removed (or replaced) under its watch is no longer heard: its files wait again.
    for (const [folder, { ino }] of signalled)
      if (lstatSync(absolute(root, folder), { throwIfNoEntry: false })?.ino !== ino) {
        unsignal(folder)
        return false
      }
    if (now - unnamedActivityAt < SOURCE_DELIVERY_GAP_MS) return false
    for (const [rel, at] of awaiting) {
      if (now - at < SOURCE_DELIVERY_GAP_MS) return false
      awaiting.delete(rel)
    }
    return gitQuiet(now)
  }

  /** When the batch may go: after its quiet spell, or when waiting longer would starve the daemon. */
  function dueAt(now: number): number {
    const quietMs = signalVouches(now)
      ? options.debounceMs
      : Math.max(
          options.debounceMs,
          SOURCE_DELIVERY_GAP_MS,
          dirty.size > MASS_CHANGE_MIN_PATHS ? BULK_QUIET_MS : 0,
        )
    return Math.min(
      Math.max(lastEventAt, lastActivityAt) + quietMs,
      lastNewPathAt + maxWaitMs,
      firstEventAt + BULK_HARD_CAP_MS,
    )
  }

  function scheduleFlush(now: number): void {
    clearTimeout(quietTimer)
    quietTimer = setTimeout(flushIfDue, Math.max(0, dueAt(now) - now))
  }

  /**
   * The timer is due: look again once the event loop has read what the OS has queued (timers run
   * before I/O in a loop turn, so on a busy loop the activity that would postpone the batch may
   * be waiting to be read).
   */
  function flushIfDue(): void {
    quietTimer = undefined
    setImmediate(() => {
      if (quietTimer !== undefined || dirty.size === 0 || closed) return
      const now = performance.now()
      if (dueAt(now) <= now) flushWhenGitDone()
      else scheduleFlush(now)
    })
  }

  /** Whether git is still at work on this batch: its lock held, or let go only just now. */
  function gitAtWork(now: number): boolean {
    if (!git) return false
    if (git.busy()) lockSeenAt = now
    if (lockSeenAt === 0) return false
    if (now - firstEventAt >= GIT_MAX_WAIT_MS) return false
    return now - lockSeenAt < GIT_QUIET_MS
  }

  /** Delivers the batch once git is done with it; until then looks again every few ms. */
  function flushWhenGitDone(): void {
    if (dirty.size > 0 && !closed && gitAtWork(performance.now())) {
      clearTimeout(quietTimer)
      quietTimer = setTimeout(flushWhenGitDone, GIT_RECHECK_MS)
      options.onHeldForGit?.(dirty.size)
      return
    }
    flush()
  }

  function gitBatch(): GitBatch | undefined {
    if (!git) return undefined
    const head = git.head()
    const before = headBefore
    headBefore = head
    const headMoved = head.ref !== before.ref || head.commit !== before.commit
    if (!headMoved && lockSeenAt === 0) return undefined
    const from = branchName(before)
    const to = branchName(head)
    return {
      headMoved,
      switched: headMoved && switched(before, head),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
    }
  }

  function flush(): void {
    if (quietTimer !== undefined) clearTimeout(quietTimer)
    quietTimer = undefined
    if (dirty.size === 0 || closed) return
    const paths = dirty
    const gitInfo = gitBatch()
    lockSeenAt = 0
    const info: LocalBatchInfo = {
      deleted,
      flood: paths.size > floodAt,
      ...(gitInfo ? { git: gitInfo } : {}),
    }
    dirty = new Set()
    deleted = new Set()
    beyondSignal = false
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
  /** Starts the activity signal on a flat kind folder; one missing (or not a folder) is not covered. */
  function signal(folder: string): void {
    if (closed || signalled.has(folder) || !FLAT_FOLDERS.includes(folder) || ignored(folder, true)) return
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

  for (const folder of FLAT_FOLDERS) signal(folder)
  const ready = tree.ready.then(() => {
    timeToReadyMs = performance.now() - startedAt
  })

  return {
    ready,
    get timeToReadyMs() {
      return timeToReadyMs
    },
    get pending() {
      return dirty.size + (git?.busy() ? 1 : 0)
    },
    flush,
    async close() {
      closed = true
      if (quietTimer !== undefined) clearTimeout(quietTimer)
      clearTimeout(headIdleTimer)
      gitWatch?.close()
      for (const folder of [...signalled.keys()]) unsignal(folder)
      await tree.close()
    },
  }
}
