// What each run of the work queue does (docs/watch.md, "Quiet polls" and "The run"): the
// daemon's policy around the engine, which only plans and applies what it is asked.
//
// A watcher's batch is an edit-only run of its paths. A full request (a remote poll, the deep
// rescan, the start-up reconcile, a flood) asks each listing whether it changed since the last
// full run (one 304 each, `listingsUnchanged`). While the watcher's events are the whole story of
// the local side (`eventsComplete`), that is all a quiet poll does: no file is stated, nothing is
// planned, the state is not read. The stat of every synced file (stat-check.ts: what moved since
// the last look) is taken only when the events may not be: the watcher failed or hit the
// system's watch limit (then on every poll), a look was asked for (`requireLook`: a restarted
// watcher, a git operation), no full run has settled the workspace yet, or the deep rescan.
// Only what needs the whole picture is a full run: no full run yet (start-up, or the last run
// failed), the deep rescan, a listing that changed, a flood of moved paths, moved media (matched
// across paths by their bytes), a batch that took a full plan (it read the listings, scoped to
// its paths). Otherwise the poll is an edit-only run of the paths that moved (an event the
// watcher lost, a file a run wrote) or, most of the time, nothing at all.
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
      /** For a full request: what it looked at and what it planned. */
      look?: PollLook
    }
  | { kind: 'offline'; cause: unknown }

/** What a full request (a poll, the deep rescan, a look asked for) looked at, and what came of it. */
export interface PollLook {
  /**
   * The local side: `events` (the watcher's, nothing stated), `stat` (the stat of every synced
   * file), `read` (every file read: the deep rescan).
   */
  files: 'events' | 'stat' | 'read'
  /** Paths the stat look found moved (0 when none was taken). */
  moved: number
  /** Whether the listings were asked (they are not when the run plans everything anyway). */
  listings: 'unchanged' | 'changed' | 'not asked'
  /** What the request ran: nothing (a quiet poll), the moved paths, or everything. */
  planned: 'nothing' | 'paths' | 'everything'
}

export interface LocalChanges {
  changed: string[]
  deleted: string[]
}

export interface WatchRuns {
  run(paths: ReadonlySet<string>, context: { full: boolean; signal: AbortSignal }): Promise<WatchRunOutcome>
  /** The next full request plans everything (a flood, a restarted watcher). */
  requireFull(): void
  /**
   * The next full request takes the stat of every file: the watcher's events may have missed
   * something (a restarted watcher, a git operation).
   */
  requireLook(): void
  /**
   * Takes the stat look for the next full request now, outside the queue, so that edits the
   * watcher delivers meanwhile do not wait behind it (a stat per file: long in a large workspace,
   * docs/benchmarks.md, "Figures behind code comments"). Does nothing when the next full request
   * needs no look (the watcher's events are complete).
   */
  lookAhead(): Promise<void>
}

export interface WatchRunsOptions {
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
   * Whether every local change since the last look came as a watcher's event (the watcher is
   * up, and has not failed): then a poll states no file. Without it every poll takes the stat
   * look (a caller with no watcher, a watcher past the system's watch limit).
   */
  eventsComplete?: () => boolean
  /**
   * While paused, each run that planned everything tells what the pause holds now: the paths
   * with a change to push (none: what it held was restored or reverted, and it may lift).
   */
  whilePaused?: (pushing: string[]) => Promise<void>
  /**
   * A quiet poll lets go of the state's saved records, unless a watcher's batch ran within this
   * long (EDITING_MS): an editing session keeps them for the full polls its own pushes bring.
   */
  editingMs?: number
  now?: () => number
}

/** How long after a watcher's batch the daemon counts as in an editing session. */
export const EDITING_MS = 60_000

/**
 * The remote poll's one question: did any listing change since the bases? One conditional
 * request per kind (and media), nothing downloaded or parsed when each answers "not modified".
 * False when it cannot tell (no listing read yet, a client that cannot ask). It stops at the
 * first listing that changed, whose answer the client keeps for the full run that follows.
 */
export async function listingsUnchanged(
  deps: Pick<EngineDeps, 'client' | 'codecs' | 'media'>,
): Promise<boolean> {
  const { client, media } = deps
  if (!client.listingUnchanged) return false
  for (const codec of deps.codecs) if (!(await client.listingUnchanged(codec.kind))) return false
  return !media || (await media.api.listingUnchanged())
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

/**
 * The stat looks for the next full request: taken ahead (by the poller) or by the request itself,
 * what they found gathered until the request takes it.
 */
function createStatLooks(stats: StatWatch, floodAt: number) {
  let asked = false
  /** What the looks taken ahead found moved, for the next full request. */
  let ahead: { moved: Set<string>; overflow: boolean } | undefined
  let looking: Promise<void> | undefined
  return {
    /** The next full request takes the stat look. */
    ask: () => {
      asked = true
    },
    asked: () => asked,
    /** A look was taken since the last request took what they found. */
    taken: () => ahead !== undefined,
    inFlight: () => looking,
    take(): Promise<void> {
      looking ??= (async () => {
        asked = false
        try {
          const look = await stats.look(floodAt)
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
    },
    /** What the looks found (undefined: none was taken), handed over once. */
    collect() {
      const seen = ahead
      ahead = undefined
      return seen
    },
  }
}

interface RunsState {
  /** A full run has settled everything as of the last look: polls may plan only what moved. */
  settled: boolean
  /** The next full request plans everything (a flood, a restarted watcher). */
  fullAsked: boolean
}

const MEDIA_FOLDER = `${FOLDER_OF.media}/`

/** Why a full request must plan everything, or undefined when the paths that moved will do. */
async function whyFull(
  request: { moved: ReadonlySet<string>; overflow: boolean; rehash: boolean },
  /** Read as the question gets to it: a run or a requireFull may come meanwhile. */
  state: Readonly<RunsState>,
  opts: Pick<WatchRunsOptions, 'whilePaused' | 'paused'>,
  deps: Pick<EngineDeps, 'client' | 'codecs' | 'media'>,
  listings: { asked: boolean; unchanged: boolean },
): Promise<string | undefined> {
  const { moved } = request
  if (!state.settled) return 'no full run has settled the workspace yet'
  // Whether what the pause holds is still there takes the whole picture.
  if (moved.size > 0 && opts.whilePaused && (await opts.paused())) return 'paused, and files moved'
  if (request.rehash) return 'the deep rescan'
  if (state.fullAsked) return 'asked for'
  if (request.overflow) return 'a flood of moved files'
  if (deps.media)
    for (const path of moved)
      if (path === MEDIA_INDEX_FILE || path.startsWith(MEDIA_FOLDER)) return 'media moved'
  listings.asked = true
  listings.unchanged = await listingsUnchanged(deps)
  if (!listings.unchanged) return 'a listing changed'
  return undefined
}

/**
 * Pushes a poll found go through the caller's guard first (a checkout under way; the guard may
 * pause): true holds them this time, and they are planned again by the next poll.
 */
async function holdPushes(
  plan: PlannedRun,
  hold: NonNullable<WatchRunsOptions['holdPushes']>,
  held: Set<string>,
): Promise<boolean> {
  const pushSide = plan.plan.items.filter((item) => PUSH_SIDE.has(item.action))
  const changed = pushSide.map((item) => item.path)
  if (changed.length === 0) return false
  const holding = await hold({
    changed,
    deleted: pushSide.filter((item) => item.action === 'delete-remote').map((item) => item.path),
  })
  if (holding) for (const path of changed) held.add(path)
  return holding
}

export function createWatchRuns(
  engine: WatchEngine,
  deps: Pick<EngineDeps, 'client' | 'codecs' | 'media' | 'logger'>,
  opts: WatchRunsOptions,
): WatchRuns {
  const floodAt = opts.floodAt ?? DEFAULT_MAX_BATCH_BEFORE_FLOOD
  const state: RunsState = { settled: false, fullAsked: false }
  /**
   * Paths the next poll plans again whatever it finds: pushes a run held (not for a pause), and
   * items a run found changed under it (a write that raced another edit): the next plan sees
   * both sides as they are now, where the field merge applies, instead of a conflict that no
   * quiet poll would ever look at again.
   */
  const held = new Set<string>()
  const looks = createStatLooks(opts.stats, floodAt)
  const now = opts.now ?? Date.now
  const editingMs = opts.editingMs ?? EDITING_MS
  /** When the last watcher's batch ran (none yet: the start-up reconcile's records go at once). */
  let lastBatch = Number.NEGATIVE_INFINITY

  /** Whether the next full request takes the stat look (the deep rescan always does). */
  function lookDue(): boolean {
    return !state.settled || looks.asked() || !(opts.eventsComplete?.() ?? false)
  }

  function lookAhead(): Promise<void> {
    return lookDue() ? looks.take() : Promise.resolve()
  }

  async function planned(
    paths: ReadonlySet<string>,
    full: boolean,
  ): Promise<{ paths: ReadonlySet<string>; whole: boolean; rehash: boolean; look?: PollLook }> {
    if (!full) return { paths, whole: false, rehash: false }
    const rehash = opts.rehash?.() ?? false
    // Taken before the run looks at anything (ahead, by the poller, or now): a file that
    // changes from here on moves again. A look taken ahead counts even if the watcher came
    // back meanwhile; none is taken while the watcher's events are complete.
    await looks.inFlight()
    if (!looks.taken() && (rehash || lookDue())) await looks.take()
    const taken = looks.collect()
    const seen = taken ?? { moved: new Set<string>(), overflow: false }
    const files = rehash ? 'read' : taken ? 'stat' : 'events'
    const moved = new Set([...paths, ...held, ...seen.moved])
    const listings = { asked: false, unchanged: false }
    const overflow = seen.overflow || moved.size > floodAt
    const why = await whyFull({ moved, overflow, rehash }, state, opts, deps, listings)
    held.clear()
    const polled = (planned: PollLook['planned']): PollLook => ({
      files,
      moved: seen.moved.size,
      listings: !listings.asked ? 'not asked' : listings.unchanged ? 'unchanged' : 'changed',
      planned,
    })
    if (why !== undefined) {
      deps.logger.debug({ why }, 'watch: full run')
      return { paths: moved, whole: true, rehash, look: polled('everything') }
    }
    return moved.size === 0
      ? { paths: moved, whole: false, rehash: false, look: polled('nothing') }
      : { paths: moved, whole: false, rehash: false, look: polled('paths') }
  }

  async function run(
    paths: ReadonlySet<string>,
    context: { full: boolean; signal: AbortSignal },
  ): Promise<WatchRunOutcome> {
    if (!context.full && paths.size === 0) return { kind: 'done', retryPaths: [], whole: false }
    try {
      const what = await planned(paths, context.full)
      const look = what.look ? { look: what.look } : {}
      // A quiet poll: nothing moved here, no listing changed; what stood (conflicts) stands.
      // Unless someone is editing, the daemon lets go of the state's records the last runs read
      // (docs/watch.md, "Memory follows the change").
      if (what.look?.planned === 'nothing') {
        if (now() - lastBatch >= editingMs) engine.dropSavedRecords()
        return { kind: 'done', retryPaths: [], whole: false, ...look }
      }
      if (!context.full) lastBatch = now()
      if (what.whole) {
        state.settled = false
        state.fullAsked = false
      }
      const plan: PlannedRun = await engine.plan(what.paths, { full: what.whole, rehash: what.rehash })
      // A batch that took a full plan read the listings, but settled only its own paths.
      if (!what.whole && plan.fresh !== true) state.settled = false
      let pullOnly = await opts.paused()
      // Whether what the pause holds is still there takes a plan of everything: the paths a
      // batch brought while paused (a restore, a checkout back) count as moved for the next poll.
      if (pullOnly && !what.whole && opts.whilePaused) for (const path of what.paths) held.add(path)
      if (pullOnly && what.whole && opts.whilePaused)
        await opts.whilePaused(
          plan.plan.items.filter((item) => PUSH_SIDE.has(item.action)).map((item) => item.path),
        )
      if (!pullOnly && context.full && opts.holdPushes)
        pullOnly = await holdPushes(plan, opts.holdPushes, held)
      const applied = await engine.apply(plan, {
        pullOnly,
        scope: what.whole ? [] : [...what.paths],
        full: what.whole,
        signal: context.signal,
      })
      if (what.whole && !context.signal.aborted) state.settled = true
      for (const path of racedPaths(plan, applied.outcome)) held.add(path)
      return { kind: 'done', ...applied, whole: what.whole, ...look }
    } catch (error) {
      // What this run had looked at is not settled: the next poll plans everything.
      state.settled = false
      if (unreachable(error)) return { kind: 'offline', cause: error }
      throw error
    } finally {
      // A changed listing the check read is for this run's plan only (it took it, or failed
      // before it could): a later run must never plan on it, stale.
      if (context.full) deps.client.forgetCheckedListings?.()
    }
  }

  return {
    run,
    requireFull: () => {
      state.fullAsked = true
    },
    requireLook: () => looks.ask(),
    lookAhead,
  }
}
