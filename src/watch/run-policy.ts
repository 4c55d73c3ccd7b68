// What each run of the work queue does (docs/watch.md, "Quiet polls" and "The run"): the
// daemon's policy around the engine, which only plans and applies what it is asked.
//
// A watcher's batch is an edit-only run of its paths. A full request (a remote poll, the deep
// rescan, the start-up reconcile, a flood) first looks at the stat of every synced file
// (stat-check.ts: what moved since the last look) and asks each listing whether it changed
// since the last full run (one 304 each). Only what needs the whole picture is a full run: no
// full run yet (start-up, or the last run failed), the deep rescan, a listing that changed, a
// flood of moved paths, moved media (matched across paths by their bytes), a batch that took a
// full plan (it read the listings, scoped to its paths). Otherwise the poll is an edit-only run
// of the paths that moved (an event the watcher lost, a file a run wrote) or, most of the time,
// nothing at all.
//
// Pushes wait while the watcher is paused (mass-change.ts), and pushes a poll finds go through
// the mass change guard first (`holdPushes`): they may be the head of a checkout under way.

import type { Outcome } from '../engine/outcome.js'
import type { EngineDeps, PlannedRun } from '../engine/plan-apply-types.js'
import { MEDIA_INDEX_FILE } from '../workspace/ignore-rules.js'
import { FOLDER_OF } from '../workspace/kinds.js'
import type { StatWatch } from '../workspace/stat-check.js'
import { DEFAULT_MAX_BATCH_BEFORE_FLOOD } from './local-changes.js'
import { unreachable, type WatchEngine } from './watch-engine.js'

export type WatchRunOutcome =
  | {
      kind: 'done'
      retryPaths: string[]
      /** What the run did; undefined for a quiet poll, which found nothing to plan. */
      outcome?: Outcome
      /** The run planned everything: a conflict or failure it did not find is settled. */
      whole: boolean
    }
  | { kind: 'offline'; cause: unknown }

export interface LocalChanges {
  changed: string[]
  deleted: string[]
}

export interface WatchRuns {
  run(paths: ReadonlySet<string>, context: { full: boolean; signal: AbortSignal }): Promise<WatchRunOutcome>
  /** The next full request plans everything (a flood, a restarted watcher). */
  requireFull(): void
  /**
   * Takes the stat look for the next full request now, outside the queue, so that edits the
   * watcher delivers meanwhile do not wait behind it (a stat per file: long in a large workspace,
   * docs/benchmarks.md, "Figures behind code comments").
   */
  lookAhead(): Promise<void>
}

const PUSH_SIDE = new Set(['push', 'delete-remote', 'merge'])

/**
 * Items the plan did not call conflicts but the run found changed under it (the file, or the
 * server copy, since they were read): a race, not a conflict of edits.
 */
function racedPaths(planned: PlannedRun, outcome: Outcome): string[] {
  if (outcome.conflicts.length === 0) return []
  const actions = new Map(planned.plan.items.map((item) => [item.path, item.action]))
  return outcome.conflicts
    .filter((item) => actions.has(item.path) && actions.get(item.path) !== 'conflict')
    .map((item) => item.path)
}

export function createWatchRuns(
  engine: WatchEngine,
  deps: Pick<EngineDeps, 'client' | 'codecs' | 'media' | 'logger'>,
  opts: {
    stats: StatWatch
    /** Whether the watcher is paused (the pause file): only the pull side runs. */
    paused: () => Promise<boolean>
    /** Asked at the start of a full request: the deep rescan (read every file, plan everything). */
    rehash?: () => boolean
    /**
     * Pushes a poll found (not a watcher's batch, which the daemon guarded already): true holds
     * them this time (a checkout under way; the guard may pause).
     */
    holdPushes?: (changes: LocalChanges) => Promise<boolean>
    /** Past this many moved paths a poll plans everything. */
    floodAt?: number
    /**
     * While paused, each run that planned everything tells what the pause holds now: the paths
     * with a change to push (none: what it held was restored or reverted, and it may lift).
     */
    whilePaused?: (pushing: string[]) => Promise<void>
  },
): WatchRuns {
  const floodAt = opts.floodAt ?? DEFAULT_MAX_BATCH_BEFORE_FLOOD
  const mediaFolder = `${FOLDER_OF.media}/`
  /** A full run has settled everything as of the last look: polls may plan only what moved. */
  let settled = false
  let fullAsked = false
  /**
   * Paths the next poll plans again whatever it finds: pushes a run held (not for a pause), and
   * items a run found changed under it (a write that raced another edit): the next plan sees
   * both sides as they are now, where the field merge applies, instead of a conflict that no
   * quiet poll would ever look at again.
   */
  const held = new Set<string>()
  /** What the looks taken ahead found moved, for the next full request. */
  let ahead: { moved: Set<string>; overflow: boolean } | undefined
  let looking: Promise<void> | undefined

  function lookAhead(): Promise<void> {
    looking ??= (async () => {
      try {
        const look = await opts.stats.look(floodAt)
        ahead ??= { moved: new Set(), overflow: false }
        for (const path of look.moved) {
          if (ahead.moved.size >= floodAt) ahead.overflow = true
          else ahead.moved.add(path)
        }
        ahead.overflow ||= look.overflow
      } finally {
        looking = undefined
      }
    })()
    return looking
  }

  async function listingsUnchanged(): Promise<boolean> {
    const { client, media } = deps
    if (!client.listingUnchanged) return false
    for (const codec of deps.codecs) if (!(await client.listingUnchanged(codec.kind))) return false
    return !media || (await media.api.listingUnchanged())
  }

  /** Why a full request must plan everything, or undefined when the paths that moved will do. */
  async function fullNeeded(moved: ReadonlySet<string>, overflow: boolean, rehash: boolean) {
    if (!settled) return 'no full run has settled the workspace yet'
    // Whether what the pause holds is still there takes the whole picture.
    if (moved.size > 0 && opts.whilePaused && (await opts.paused())) return 'paused, and files moved'
    if (rehash) return 'the deep rescan'
    if (fullAsked) return 'asked for'
    if (overflow) return 'a flood of moved files'
    if (deps.media)
      for (const path of moved)
        if (path === MEDIA_INDEX_FILE || path.startsWith(mediaFolder)) return 'media moved'
    if (!(await listingsUnchanged())) return 'a listing changed'
    return undefined
  }

  async function planned(
    paths: ReadonlySet<string>,
    full: boolean,
  ): Promise<{ paths: ReadonlySet<string>; whole: boolean; rehash: boolean } | undefined> {
    if (!full) return { paths, whole: false, rehash: false }
    const rehash = opts.rehash?.() ?? false
    // Taken before the run looks at anything (ahead, by the poller, or now): a file that
    // changes from here on moves again.
    await looking
    if (ahead === undefined) await lookAhead()
    const look = ahead!
    ahead = undefined
    const moved = new Set([...paths, ...held, ...look.moved])
    const why = await fullNeeded(moved, look.overflow || moved.size > floodAt, rehash)
    held.clear()
    if (why !== undefined) {
      deps.logger.debug({ why }, 'watch: full run')
      return { paths: moved, whole: true, rehash }
    }
    return moved.size === 0 ? undefined : { paths: moved, whole: false, rehash: false }
  }

  async function run(
    paths: ReadonlySet<string>,
    context: { full: boolean; signal: AbortSignal },
  ): Promise<WatchRunOutcome> {
    if (!context.full && paths.size === 0) return { kind: 'done', retryPaths: [], whole: false }
    try {
      const what = await planned(paths, context.full)
      // A quiet poll: nothing moved here, no listing changed; what stood (conflicts) stands.
      if (what === undefined) return { kind: 'done', retryPaths: [], whole: false }
      if (what.whole) {
        settled = false
        fullAsked = false
      }
      const plan: PlannedRun = await engine.plan(what.paths, { full: what.whole, rehash: what.rehash })
      // A batch that took a full plan read the listings, but settled only its own paths.
      if (!what.whole && plan.fresh !== true) settled = false
      let pullOnly = await opts.paused()
      if (pullOnly && what.whole && opts.whilePaused)
        await opts.whilePaused(
          plan.plan.items.filter((item) => PUSH_SIDE.has(item.action)).map((item) => item.path),
        )
      if (!pullOnly && context.full && opts.holdPushes) {
        const pushSide = plan.plan.items.filter((item) => PUSH_SIDE.has(item.action))
        const changed = pushSide.map((item) => item.path)
        if (changed.length > 0) {
          pullOnly = await opts.holdPushes({
            changed,
            deleted: pushSide.filter((item) => item.action === 'delete-remote').map((item) => item.path),
          })
          if (pullOnly) for (const path of changed) held.add(path)
        }
      }
      const applied = await engine.apply(plan, {
        pullOnly,
        scope: what.whole ? [] : [...what.paths],
        full: what.whole,
        signal: context.signal,
      })
      if (what.whole && !context.signal.aborted) settled = true
      for (const path of racedPaths(plan, applied.outcome)) held.add(path)
      return { kind: 'done', ...applied, whole: what.whole }
    } catch (error) {
      // What this run had looked at is not settled: the next poll plans everything.
      settled = false
      if (unreachable(error)) return { kind: 'offline', cause: error }
      throw error
    }
  }

  return {
    run,
    requireFull: () => {
      fullAsked = true
    },
    lookAhead,
  }
}
