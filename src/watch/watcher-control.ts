// The daemon's watcher (local-changes.ts): its start, its restart when .cmsyncignore changes, and
// its errors. A watcher that failed may miss edits from then on, so every poll states every file
// until a restart watches afresh (`eventsComplete`, run-policy.ts).

import type { EngineLogger } from '../log/engine-logger.js'
import type { IgnoreRules } from '../workspace/ignore-rules.js'
import { loadIgnoreRules } from '../workspace/ignore-rules.js'
import { messageOf } from './daemon-errors.js'
import { gitActivity } from './git-activity.js'
import { type LocalBatchInfo, type WorkspaceWatcher, watchWorkspace } from './local-changes.js'
import type { EventSink } from './watch-events.js'

export interface WatcherControl {
  /** Starts watching; resolves once the watcher is ready. */
  start(): Promise<void>
  /** The rules the watcher (and the stat look) ignore paths by; reloaded on a restart. */
  rules(): IgnoreRules
  /** Paths seen but not yet delivered (a batch is gathering), or git is at work. */
  pending(): number
  /** Whether every local change came as an event: a watcher runs and has not failed. */
  eventsComplete(): boolean
  /** Milliseconds the watcher took to be ready (0 when none is). */
  timeToReadyMs(): number
  /** A restart under way (none: resolved). */
  restarting(): Promise<void>
  close(): Promise<void> | undefined
}

export function createWatcherControl(w: {
  root: string
  debounceMs: number
  pollMs: number
  rules: IgnoreRules
  emit: EventSink
  logger: EngineLogger
  onBatch: (paths: Set<string>, info: LocalBatchInfo) => Promise<void>
  /** The daemon is shutting down: no restart. */
  stopping: () => boolean
  /** The rules changed: what the stat look knew of ignored folders is stale. */
  rulesChanged: () => void
  /** The next full request plans everything and states every file. */
  lookAgain: () => void
  /** Asks for a full run now. */
  runFull: () => void
}): WatcherControl {
  const { root, emit } = w
  let rules = w.rules
  let watcher: WorkspaceWatcher | undefined
  /**
   * The watcher failed (the system's watch limit, a folder it could not watch): its events may
   * miss edits from here on, so every poll states every file, until a restart watches afresh.
   */
  let eventsLost = false
  let warnedNoSpace = false
  // The repository the workspace is in, read (never run) to see git's operations as such.
  const git = gitActivity(root)

  function onError(error: unknown): void {
    // Events may be lost from here on: each poll's stat look finds what moved.
    eventsLost = true
    if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
      if (warnedNoSpace) return
      warnedNoSpace = true
      emit({
        event: 'warning',
        message: `the system's file watch limit is reached (raise fs.inotify.max_user_watches); edits are still found by the poll every ${Math.round(w.pollMs / 1000)} s, which looks at every file`,
      })
      return
    }
    emit({ event: 'warning', message: `watching files: ${messageOf(error)}` })
  }

  async function start(): Promise<void> {
    const next = watchWorkspace(root, {
      debounceMs: w.debounceMs,
      ...(git ? { git } : {}),
      ignoreRules: rules,
      onBatch: w.onBatch,
      onError,
      onIgnoreFileChange: () => void restart(),
    })
    watcher = next
    await next.ready
  }

  // .cmsyncignore changed: folders the old rules ignored were never crawled, so start afresh.
  let restarting: Promise<void> = Promise.resolve()
  function restart(): Promise<void> {
    restarting = restarting.then(async () => {
      if (w.stopping()) return
      await watcher?.close()
      rules = await loadIgnoreRules(root)
      w.rulesChanged()
      // The new watcher crawls afresh; what the old one missed meanwhile the next look finds.
      eventsLost = false
      await start()
      w.lookAgain()
      w.logger.info({}, 'watch: .cmsyncignore changed, watcher restarted')
      w.runFull()
    })
    return restarting
  }

  return {
    start,
    rules: () => rules,
    pending: () => watcher?.pending ?? 0,
    eventsComplete: () => watcher !== undefined && !eventsLost,
    timeToReadyMs: () => Math.round(watcher?.timeToReadyMs ?? 0),
    restarting: () => restarting,
    close: () => watcher?.close(),
  }
}
