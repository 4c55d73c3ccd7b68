// What the daemon tells its user, one event at a time: the command prints each as a line on a
// terminal or as one JSON object per line (--json), and logs it. Runs repeat themselves (every
// remote poll is a full reconcile that finds the same open conflict again), so conflicts and
// errors are reported when they appear, not on every poll.

import type { HeldChange } from '../engine/held.js'
import type { ConflictLeaf } from '../engine/merge/merge-json.js'
import type { ItemReport, Outcome } from '../engine/outcome.js'
import type { RevertedLeaf } from '../state/recent-pushes.js'
import type { PauseInfo } from './mass-change.js'
import type { PollLook } from './run-policy.js'

export type WatchEvent =
  | { event: 'ready'; root: string; tracked: number; timeToReadyMs: number }
  /**
   * A full request (the remote poll, the deep rescan, a look the watcher asked for) is done: what
   * it looked at and what it planned (run-policy.ts). A quiet poll is files 'events', listings
   * 'unchanged', planned 'nothing'. Not shown on the terminal.
   */
  | ({ event: 'polled' } & PollLook)
  /** The start-up reconcile is done (what it changed was reported before this). */
  | { event: 'reconciled'; tracked: number; durationMs: number }
  /** kept: a delete's server copy, in .cms-sync/trash/. */
  | { event: 'pushed'; path: string; action: 'push' | 'delete-remote'; kept?: string }
  | { event: 'pulled'; path: string; action: 'pull' | 'delete-local' }
  /** Deployed through its connection (or taken off the site). */
  | { event: 'published'; path: string; action: 'publish' | 'unpublish'; connection?: string | null }
  /**
   * The verifier re-read a media item's bytes on the server (watch.verifyMedia): the same as the
   * last sync, or other bytes, which the full run that follows pulls (or finds in conflict).
   */
  | { event: 'verified'; path: string; same: boolean }
  /** A pull put back leaves of our own recent push (an editor's stale save); ours is in trash. */
  | { event: 'reverted'; path: string; leaves: RevertedLeaf[]; trash?: string }
  /** Both sides changed different leaves: each side now holds both edits. */
  | { event: 'merged'; path: string }
  | { event: 'conflict'; path: string; reason?: string; leaves?: ConflictLeaf[] }
  | { event: 'failed'; path: string; action: string; error: string }
  | ({ event: 'paused' } & PauseInfo)
  /**
   * What guards and the pause hold (held.ts), whenever that changes and again every few minutes
   * while anything is held; an empty list once nothing is.
   */
  | { event: 'held'; held: HeldChange[] }
  /** The pause was lifted: what it held was restored or reverted (nothing is left to push). */
  | { event: 'resumed'; reason: string }
  | { event: 'offline'; pending: number; error: string }
  | { event: 'online' }
  /** The server had refused the token; a new one from the credentials file is in use. */
  | { event: 'token-renewed' }
  | { event: 'error'; message: string }
  | { event: 'warning'; message: string }
  | { event: 'stopped'; pending: number; finished: boolean; durationMs: number }
  /** The local page's address (with this run's secret): printed once, never logged. */
  | { event: 'page'; url: string }

export type EventSink = (event: WatchEvent) => void

/** While anything is held, watch says so again this often (a calm reminder, not every poll). */
export const HELD_REMINDER_MS = 5 * 60_000

const heldKey = (h: HeldChange) => `${h.guard}\0${h.side}\0${h.kind ?? ''}\0${h.action}`

function itemEvent(item: ItemReport): WatchEvent | undefined {
  switch (item.action) {
    case 'push':
    case 'delete-remote':
      return {
        event: 'pushed',
        path: item.path,
        action: item.action,
        ...(item.kept ? { kept: item.kept } : {}),
      }
    case 'pull':
    case 'delete-local':
      return { event: 'pulled', path: item.path, action: item.action }
    case 'merge':
      return { event: 'merged', path: item.path }
    case 'publish':
    case 'unpublish':
      return {
        event: 'published',
        path: item.path,
        action: item.action,
        ...(item.connection !== undefined ? { connection: item.connection } : {}),
      }
    default:
      return undefined
  }
}

export type OutcomeReporter = ReturnType<typeof createOutcomeReporter>

/**
 * Turns run outcomes into events, remembering which conflicts and failures were already told.
 * A full run sees every open conflict, so after one, a conflict it no longer finds is settled
 * and will be told again if it comes back.
 */
export function createOutcomeReporter(
  emit: EventSink,
  opts: { reminderMs?: number; now?: () => number } = {},
) {
  let conflicts = new Set<string>()
  let failures = new Map<string, string>()
  let lastError: string | undefined
  const reminderMs = opts.reminderMs ?? HELD_REMINDER_MS
  const now = opts.now ?? Date.now
  /** What the guards hold, by guard, side, kind and action; and the pause's entry. */
  let guarded = new Map<string, HeldChange>()
  let paused: HeldChange | undefined
  let told = '[]'
  let toldAt = 0

  function current(): HeldChange[] {
    return [...(paused ? [paused] : []), ...[...guarded.values()].filter((h) => h.paths.length > 0)]
  }

  /** Tells what is held when it changed, or when the reminder is due. */
  function tellHeld(): void {
    const held = current()
    const text = JSON.stringify(held)
    const due = held.length > 0 && now() - toldAt >= reminderMs
    if (text === told && !due) return
    told = text
    toldAt = now()
    emit({ event: 'held', held })
  }

  /** A run's held changes: a whole run's replace the guards' list; a partial run's add to it. */
  function heldFrom(outcome: Outcome, whole: boolean): void {
    const next = whole ? new Map<string, HeldChange>() : new Map(guarded)
    if (!whole) {
      // What a partial run carried out (a resolve, a restore, an edit) is no longer held.
      const done = new Set(outcome.applied.map((item) => item.path))
      for (const [key, held] of next) {
        const paths = held.paths.filter((p) => !done.has(p))
        if (paths.length !== held.paths.length) next.set(key, { ...held, paths, count: paths.length })
      }
    }
    for (const held of outcome.held ?? []) {
      const key = heldKey(held)
      const before = guarded.get(key)
      const paths = whole ? held.paths : [...new Set([...(next.get(key)?.paths ?? []), ...held.paths])].sort()
      next.set(key, {
        ...held,
        paths,
        count: paths.length,
        since: before?.since ?? new Date(now()).toISOString(),
      })
    }
    guarded = next
  }

  return {
    outcome(outcome: Outcome, full: boolean): void {
      lastError = undefined
      const seenConflicts = new Set<string>()
      const seenFailures = new Map<string, string>()
      for (const item of outcome.applied) {
        conflicts.delete(item.path)
        failures.delete(item.path)
        const event = itemEvent(item)
        if (event) emit(event)
        if (item.reverted?.length)
          emit({
            event: 'reverted',
            path: item.path,
            leaves: item.reverted,
            ...(item.trash ? { trash: item.trash } : {}),
          })
      }
      for (const item of outcome.conflicts) {
        seenConflicts.add(item.path)
        if (!conflicts.has(item.path))
          emit({
            event: 'conflict',
            path: item.path,
            ...(item.reason ? { reason: item.reason } : {}),
            ...(item.leaves?.length ? { leaves: item.leaves } : {}),
          })
      }
      for (const item of outcome.failed) {
        const error = item.error ?? 'failed'
        seenFailures.set(item.path, error)
        if (failures.get(item.path) !== error)
          emit({ event: 'failed', path: item.path, action: item.action, error })
      }
      if (full) {
        conflicts = seenConflicts
        failures = seenFailures
      } else {
        for (const p of seenConflicts) conflicts.add(p)
        for (const [p, e] of seenFailures) failures.set(p, e)
      }
      heldFrom(outcome, full)
      tellHeld()
    },
    /** The pause's entry (mass-change.ts `heldByPause`), or undefined once it is lifted. */
    pause(entry: HeldChange | undefined): void {
      paused = entry
      tellHeld()
    },
    /** After every run, quiet polls included: the reminder, when due. */
    remind(): void {
      tellHeld()
    },
    /** What is held now (the guards' and the pause's). */
    held: current,
    /** A run that threw (a safety stop, a refused token): told once until something changes. */
    error(message: string): void {
      if (message === lastError) return
      lastError = message
      emit({ event: 'error', message })
    },
  }
}
