// The engine as the watch daemon runs it (docs/watch.md "The run"): it plans what it is asked
// (a batch of paths on its own, plan-edits.ts, or everything) and applies what it is asked (the
// sync selection, or only its pull side). When to run, on what, and whether pushes wait (the
// pause, the mass change guard, quiet polls) is the daemon's policy, run-policy.ts. The daemon
// holds the workspace lock for its whole life, so this does not take it, and the state stays in
// memory from run to run instead of being read again each time.

import type { Outcome } from '../engine/outcome.js'
import type { Side } from '../engine/plan.js'
import { applyRun, openState, planRun } from '../engine/plan-and-apply.js'
import { type EngineDeps, type PlannedRun, SELECT } from '../engine/plan-apply-types.js'
import { planEdits } from '../engine/plan-edits.js'
import { putBackReverted } from '../engine/push-again.js'
import { releaseHeld, resolveConflicts, restoreEdits } from '../engine/resolve-restore-release.js'
import { findCause } from '../errors/find-cause.js'
import { RemoteError } from '../remote/errors.js'
import type { StateStore } from '../state/state-file.js'
import { loadIgnoreRules } from '../workspace/ignore-rules.js'

/** Failures worth retrying soon: the server or the way to it, not the item. */
const TRANSIENT = new Set(['server', 'rate-limited', 'network', 'timeout'])

/** Saves within a run only every this many items; the rest wait for the end or the timer. */
const STATE_BATCH = { items: 250, ms: Number.POSITIVE_INFINITY }

export interface WatchApplied {
  /** Items that failed in a way worth retrying soon (the server or the way to it). */
  retryPaths: string[]
  outcome: Outcome
}

export interface WatchEngine {
  /** Reads the state and checks it is bound to the configured target (a safety stop if not). */
  open(): Promise<void>
  /**
   * Plans `paths` as an edit-only run (plan-edits.ts), or everything when `full` (or when the
   * batch needs the whole picture: media, a server deletion, see plan-edits.ts). `rehash`: read
   * every file instead of trusting the stat cache (the deep rescan).
   */
  plan(paths: ReadonlySet<string>, how: { full: boolean; rehash?: boolean }): Promise<PlannedRun>
  /**
   * Carries out the sync selection of a plan (only the pull side when `pullOnly`), under
   * `scope` (every path when empty), and reports what it did.
   */
  apply(
    planned: PlannedRun,
    how: { pullOnly: boolean; scope: readonly string[]; full: boolean; signal: AbortSignal },
  ): Promise<WatchApplied>
  /**
   * `resolve` (or `restore`) asked of the daemon by the CLI, on the daemon's own state: a full
   * plan with the kept side preferred, carrying out only what it settled under `scope`. The
   * caller runs it between two runs (WorkQueue.exclusive).
   */
  settle(request: {
    command: 'resolve' | 'restore' | 'again'
    scope: string[]
    keep: Side
    /** resolve on single leaves: JSON Pointers per file. */
    leaves?: Readonly<Record<string, readonly string[]>>
  }): Promise<Outcome>
  /**
   * Held local changes pushed on a person's word (the local page's "push them", as `cms-sync
   * push --allow-deletes <paths>`): a full plan, the sync selection under `scope` with deletions
   * allowed. The caller runs it between two runs and lifts the pause.
   */
  release(scope: string[]): Promise<Outcome>
  /** Saves what edit-only runs left unsaved (shutdown). */
  saveState(): Promise<void>
  /** Items the state tracks; undefined before the first run. */
  tracked(): number | undefined
  /**
   * Lets go of the state's records a save holds on disk (an idle daemon holds none: they are
   * read again by the next run that asks); unsaved changes stay until saved.
   */
  dropSavedRecords(): void
  /** How many of the state's records are in memory now. */
  recordsInMemory(): number
  /**
   * The synced media whose server bytes the listing cannot vouch for (no revision: upstream),
   * with what re-reading them should find and when that was last checked. Taken after each run
   * that planned everything (media change in no other run), so asking reads no record.
   */
  mediaToVerify(): MediaToVerify[]
  /** The server's bytes of `path` were read just now and are `sha256`: recorded if that is still its base. */
  markVerified(path: string, sha256: string, at: string): boolean
}

export interface MediaToVerify {
  id: string
  path: string
  sha256: string
  size: number
  verifiedAt: string | null
}

/** The synced media the listing cannot vouch for (no revision: upstream); reads every record. */
function unvouchedMedia(store: StateStore): MediaToVerify[] {
  return store.items('media').flatMap((item) =>
    item.media && item.remoteRev === ''
      ? [
          {
            id: item.id,
            path: item.path,
            sha256: item.media.sha256,
            size: item.stat?.size ?? 0,
            verifiedAt: item.verifiedAt ?? null,
          },
        ]
      : [],
  )
}

/**
 * Whether the error, or one behind it (a listing stop wraps the client's error), is the way to
 * the server: the run is offline, not failed, and everything it had stays queued.
 */
export function unreachable(error: unknown): boolean {
  return findCause(error, (e) => e instanceof RemoteError && TRANSIENT.has(e.code)) !== undefined
}

export function createWatchEngine(
  deps: EngineDeps,
  opts: {
    /**
     * An edit-only run left the state unsaved (it is saved at the end of full runs): the
     * daemon decides when to save (src/watch/save-timer.ts) and calls saveState.
     */
    onUnsaved?: () => void
    /** Whether a publish after a write of `path` waits for its saves to pause (publish-quiet.ts). */
    deferPublish?: (path: string) => boolean
  } = {},
): WatchEngine {
  let store: StateStore | undefined
  /** The media the verifier re-reads, as the last run that planned everything left them. */
  let toVerify: MediaToVerify[] = []

  async function saveState(): Promise<void> {
    await store?.flush()
  }

  async function open(): Promise<StateStore> {
    store ??= (await openState(deps, { batch: STATE_BATCH })).store
    return store
  }

  async function plan(
    paths: ReadonlySet<string>,
    how: { full: boolean; rehash?: boolean },
  ): Promise<PlannedRun> {
    const store = await open()
    if (!how.full) {
      const edit = await planEdits(deps, store, await loadIgnoreRules(deps.root), paths)
      if (edit.kind === 'planned') return edit.run
      deps.logger.debug({ why: edit.why, paths: paths.size }, 'watch: this batch needs a full plan')
    }
    // Nothing changed on either side (the usual start-up reconcile): no plan entry per item.
    return planRun(deps, { store, rehash: how.rehash ?? false, unlessUnchanged: true })
  }

  async function apply(
    planned: PlannedRun,
    how: { pullOnly: boolean; scope: readonly string[]; full: boolean; signal: AbortSignal },
  ): Promise<WatchApplied> {
    let outcome: Outcome
    try {
      outcome = await applyRun(deps, planned, {
        select: how.pullOnly ? SELECT.pull : SELECT.sync,
        mergeWrites: how.pullOnly ? 'local' : 'both',
        scope: [...how.scope],
        dryRun: false,
        allowDeletes: false,
        // A guard holds what it is about; the daemon reports it and syncs the rest.
        holdGuarded: true,
        reportScanProblems: true,
        reportRemoteProblems: how.full,
        signal: how.signal,
        deferSave: planned.fresh === true,
        ...(opts.deferPublish ? { deferPublish: opts.deferPublish } : {}),
      })
    } finally {
      if (planned.fresh)
        opts.onUnsaved?.() // a full run saves at its end
      // Media change only in runs that planned everything (an edit-only plan of media is one).
      else if (store) toVerify = unvouchedMedia(store)
    }
    const retryPaths = outcome.failed
      .filter((f) => f.code !== undefined && TRANSIENT.has(f.code))
      .map((f) => f.path)
    return { retryPaths, outcome }
  }

  async function settle(request: {
    command: 'resolve' | 'restore' | 'again'
    scope: string[]
    keep: Side
    leaves?: Readonly<Record<string, readonly string[]>>
  }): Promise<Outcome> {
    const store = await open()
    try {
      if (request.command === 'again') return await pushAgain(store, request.scope)
      if (request.command === 'restore') return await restoreEdits(deps, request.scope, { store })
      const leaves = new Map(Object.entries(request.leaves ?? {}))
      return await resolveConflicts(deps, { scope: request.scope, keep: request.keep, leaves }, { store })
    } finally {
      toVerify = unvouchedMedia(store)
    }
  }

  async function release(scope: string[]): Promise<Outcome> {
    const store = await open()
    try {
      return await releaseHeld(deps, scope, { store })
    } finally {
      toVerify = unvouchedMedia(store)
    }
  }

  /** push --again on the daemon's state: the files get our reverted leaves back, then are pushed. */
  async function pushAgain(store: StateStore, scope: string[]): Promise<Outcome> {
    const runId = new Date().toISOString().replace(/[:.]/g, '-')
    const paths = await putBackReverted(deps.root, scope, runId)
    const planned = await planRun(deps, { store })
    return applyRun(deps, planned, {
      select: SELECT.push,
      scope: scope.length > 0 ? scope : paths,
      dryRun: false,
      allowDeletes: false,
      reportScanProblems: false,
      reportRemoteProblems: false,
      mergeWrites: 'remote',
    })
  }

  return {
    settle,
    release,
    plan,
    apply,
    open: async () => {
      await open()
    },
    saveState,
    tracked: () => store?.size,
    dropSavedRecords: () => store?.release(),
    recordsInMemory: () => store?.inMemory ?? 0,
    mediaToVerify: () => toVerify,
    markVerified: (path, sha256, at) => {
      if (store?.get(path)?.media?.sha256 !== sha256) return false
      store.verified(path, at)
      toVerify = toVerify.map((item) => (item.path === path ? { ...item, verifiedAt: at } : item))
      return true
    },
  }
}
