// The engine as the watch daemon's work queue runs it (docs/watch.md "The run"): a batch of
// dirty paths is planned on its own (edit-run.ts), a full run (start-up, remote poll, rescan,
// flood) plans everything; either carries out the sync selection (only the pull side while the
// watcher is paused) and reports the outcome in the queue's terms. The daemon holds the
// workspace lock for its whole life, so this does not take it, and the state stays in memory
// from run to run instead of being read again each time.

import { RemoteError } from '../remote/errors.js'
import type { StateStore } from '../state/state-file.js'
import { loadIgnoreRules } from '../workspace/ignore-rules.js'
import type { Kind } from '../workspace/kinds.js'
import { statFingerprint } from '../workspace/stat-check.js'
import { planEdits } from './edit-run.js'
import type { Outcome } from './outcome.js'
import type { Side } from './plan.js'
import { restoreLocalEdits } from './restore.js'
import { applyRun, openState, planRun } from './run.js'
import { type EngineDeps, type PlannedRun, SELECT } from './run-types.js'

/** Failures worth retrying soon: the server or the way to it, not the item. */
const TRANSIENT = new Set(['server', 'rate-limited', 'network', 'timeout'])

/** Saves within a run only every this many items; the rest wait for the end or the timer. */
const STATE_BATCH = { items: 250, ms: Number.POSITIVE_INFINITY }

export type WatchRunOutcome =
  | { kind: 'done'; retryPaths: string[]; outcome: Outcome }
  | { kind: 'offline'; cause: unknown }

export interface WatchEngine {
  /**
   * The watcher delivered local changes (or was restarted): the next full run must look at the
   * workspace, even if the server is unchanged.
   */
  noteLocalChange(): void
  /** The watcher may miss events (it reported an error): every poll looks at the workspace. */
  distrustWatcher(): void
  /** Reads the state and checks it is bound to the configured target (a safety stop if not). */
  open(): Promise<void>
  run(paths: ReadonlySet<string>, context: { full: boolean; signal: AbortSignal }): Promise<WatchRunOutcome>
  /**
   * `resolve` (or `restore`) asked of the daemon by the CLI, on the daemon's own state: a full
   * plan with the kept side preferred, carrying out only what it settled under `scope`. The
   * caller runs it between two runs (WorkQueue.exclusive).
   */
  settle(request: { command: 'resolve' | 'restore'; scope: string[]; keep: Side }): Promise<Outcome>
  /** Saves what edit-only runs left unsaved (shutdown). */
  saveState(): Promise<void>
  /** Items the state tracks; undefined before the first run. */
  tracked(): number | undefined
}

/** Whether the error, or one behind it (a listing stop wraps the client's error), is the way to the server. */
function unreachable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof RemoteError && TRANSIENT.has(e.code)) return true
  }
  return false
}

export function createWatchEngine(
  deps: EngineDeps,
  opts: {
    paused: () => Promise<boolean>
    /**
     * An edit-only run left the state unsaved (it is saved at the end of full runs): the
     * daemon decides when to save (src/watch/save-timer.ts) and calls saveState.
     */
    onUnsaved?: () => void
    /** Asked at the start of a full run: read every file, not trusting the stat cache. */
    rehash?: () => boolean
    /**
     * A full run finds local changes the watcher has not judged yet (a checkout under way, events
     * it missed): the daemon puts them through the mass change guard first. True: carry out only
     * the pull side this time.
     */
    holdPushes?: (localChanges: { changed: string[]; deleted: string[] }) => Promise<boolean>
  },
): WatchEngine {
  let store: StateStore | undefined
  /** What the last full run reported, while nothing is known to have changed since. */
  let lastFull: Outcome | undefined
  /** The stat fingerprint of the synced folders taken just before that run (stat-check.ts). */
  let lastFullPrint = ''
  let localChanged = true
  let watcherTrusted = true

  async function saveState(): Promise<void> {
    await store?.flush()
  }

  async function open(): Promise<StateStore> {
    store ??= (await openState(deps, { batch: STATE_BATCH })).store
    return store
  }

  async function planFor(paths: ReadonlySet<string>, full: boolean, rehash: boolean): Promise<PlannedRun> {
    const store = await open()
    if (!full) {
      const edit = await planEdits(deps, store, await loadIgnoreRules(deps.root), paths)
      if (edit.kind === 'planned') return edit.run
      deps.logger.debug({ why: edit.why, paths: paths.size }, 'watch: this batch needs a full plan')
    }
    return planRun(deps, { store, rehash })
  }

  /**
   * A remote poll over a quiet workspace: every listing byte for byte what the last full run
   * read (one request each, nothing parsed) means nothing changed on the server, and the watcher
   * said nothing changed here. Parsing 10,000 items, stating every file and planning them all
   * again would find what the last run found: at 10 s polls that was most of an idle daemon's
   * CPU and memory. The deep rescan never stops here.
   */
  async function fingerprint(): Promise<string> {
    const rules = await loadIgnoreRules(deps.root)
    const kinds: Kind[] = [
      ...deps.codecs.map((codec) => codec.kind),
      ...(deps.media ? ['media' as const] : []),
    ]
    return statFingerprint(deps.root, kinds, (path) => rules.ignores(path))
  }

  async function nothingChanged(print: string): Promise<boolean> {
    if (lastFull === undefined || localChanged || !watcherTrusted) return false
    // The watcher's word is checked by stat: an event it lost costs this poll, not a deep rescan.
    if (print !== lastFullPrint) return false
    const { client, media } = deps
    if (!client.listingUnchanged) return false
    for (const codec of deps.codecs) if (!(await client.listingUnchanged(codec.kind))) return false
    return !media || (await media.api.listingUnchanged())
  }

  async function run(
    paths: ReadonlySet<string>,
    context: { full: boolean; signal: AbortSignal },
  ): Promise<WatchRunOutcome> {
    const empty: Outcome = { applied: [], conflicts: [], failed: [] }
    if (!context.full && paths.size === 0) return { kind: 'done', retryPaths: [], outcome: empty }
    try {
      const rehash = context.full && (opts.rehash?.() ?? false)
      // Taken before the run looks at anything: a file that changes from here on differs from it.
      const print = context.full ? await fingerprint() : ''
      if (context.full && !rehash && (await nothingChanged(print))) {
        // As the last full run left it: its open conflicts and failures stand (told already).
        return { kind: 'done', retryPaths: [], outcome: { ...lastFull!, applied: [] } }
      }
      // From here on the workspace is looked at again; what changes meanwhile is noted anew.
      localChanged = !context.full
      lastFull = undefined
      const planned = await planFor(paths, context.full, rehash)
      let pullOnly = await opts.paused()
      if (!pullOnly && context.full && opts.holdPushes) {
        const pushSide = planned.plan.items.filter(
          (i) => i.action === 'push' || i.action === 'delete-remote' || i.action === 'merge',
        )
        pullOnly = await opts.holdPushes({
          changed: pushSide.map((i) => i.path),
          deleted: pushSide.filter((i) => i.action === 'delete-remote').map((i) => i.path),
        })
      }
      let outcome: Outcome
      try {
        outcome = await applyRun(deps, planned, {
          select: pullOnly ? SELECT.pull : SELECT.sync,
          mergeWrites: pullOnly ? 'local' : 'both',
          scope: context.full ? [] : [...paths],
          dryRun: false,
          allowDeletes: false,
          reportScanProblems: true,
          reportRemoteProblems: context.full,
          signal: context.signal,
          deferSave: planned.fresh === true,
        })
      } finally {
        if (planned.fresh) opts.onUnsaved?.() // a full run saves at its end
      }
      const retryPaths = outcome.failed
        .filter((f) => f.code !== undefined && TRANSIENT.has(f.code))
        .map((f) => f.path)
      if (context.full && !localChanged) {
        lastFull = outcome
        lastFullPrint = print
      }
      return { kind: 'done', retryPaths, outcome }
    } catch (error) {
      localChanged = true
      if (unreachable(error)) return { kind: 'offline', cause: error }
      throw error
    }
  }

  async function settle(request: {
    command: 'resolve' | 'restore'
    scope: string[]
    keep: Side
  }): Promise<Outcome> {
    const store = await open()
    // What the last full run found no longer stands.
    localChanged = true
    lastFull = undefined
    const planned = await planRun(deps, { store, prefer: request.keep })
    if (request.command === 'restore') restoreLocalEdits(planned.plan.items, request.scope)
    return applyRun(deps, planned, {
      select: SELECT.resolve,
      scope: request.scope,
      dryRun: false,
      // Keeping a deletion is the user's explicit choice for these paths.
      allowDeletes: true,
      reportScanProblems: false,
      reportRemoteProblems: false,
    })
  }

  return {
    settle,
    noteLocalChange: () => {
      localChanged = true
    },
    distrustWatcher: () => {
      watcherTrusted = false
    },
    run,
    open: async () => {
      await open()
    },
    saveState,
    tracked: () => store?.size,
  }
}
