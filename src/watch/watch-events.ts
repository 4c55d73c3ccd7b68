// What the daemon tells its user, one event at a time: the command prints each as a line on a
// terminal or as one JSON object per line (--json), and logs it. Runs repeat themselves (every
// remote poll is a full reconcile that finds the same open conflict again), so conflicts and
// errors are reported when they appear, not on every poll.

import type { ConflictLeaf } from '../engine/merge/merge-json.js'
import type { ItemReport, Outcome } from '../engine/outcome.js'
import type { RevertedLeaf } from '../state/recent-pushes.js'
import type { PauseInfo } from './mass-change.js'

export type WatchEvent =
  | { event: 'ready'; root: string; tracked: number; timeToReadyMs: number }
  /** The start-up reconcile is done (what it changed was reported before this). */
  | { event: 'reconciled'; tracked: number; durationMs: number }
  | { event: 'pushed'; path: string; action: 'push' | 'delete-remote' }
  | { event: 'pulled'; path: string; action: 'pull' | 'delete-local' }
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
  | { event: 'offline'; pending: number; error: string }
  | { event: 'online' }
  /** The server had refused the token; a new one from the credentials file is in use. */
  | { event: 'token-renewed' }
  | { event: 'error'; message: string }
  | { event: 'warning'; message: string }
  | { event: 'stopped'; pending: number; finished: boolean; durationMs: number }

export type EventSink = (event: WatchEvent) => void

function itemEvent(item: ItemReport): WatchEvent | undefined {
  switch (item.action) {
    case 'push':
    case 'delete-remote':
      return { event: 'pushed', path: item.path, action: item.action }
    case 'pull':
    case 'delete-local':
      return { event: 'pulled', path: item.path, action: item.action }
    case 'merge':
      return { event: 'merged', path: item.path }
    default:
      return undefined
  }
}

/**
 * Turns run outcomes into events, remembering which conflicts and failures were already told.
 * A full run sees every open conflict, so after one, a conflict it no longer finds is settled
 * and will be told again if it comes back.
 */
export function createOutcomeReporter(emit: EventSink) {
  let conflicts = new Set<string>()
  let failures = new Map<string, string>()
  let lastError: string | undefined

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
    },
    /** A run that threw (a safety stop, a refused token): told once until something changes. */
    error(message: string): void {
      if (message === lastError) return
      lastError = message
      emit({ event: 'error', message })
    },
  }
}
