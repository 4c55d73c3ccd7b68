// The pause on pushing as the daemon runs it (what makes a mass change is mass-change.ts's): the
// guard over the watcher's batches and over what full runs find changed, pausing and saying so,
// and lifting it once nothing it held is left to push.

import { trackedCount } from '../state/state-file.js'
import {
  clearPause,
  createChangeWindow,
  decideMassChange,
  heldByPause,
  type MassChangeThresholds,
  minPausePaths,
  type PauseInfo,
  pauseInfoFor,
  readPause,
  setPause,
} from './mass-change.js'
import type { LocalChanges } from './run-policy.js'
import type { WatchEngine } from './watch-engine.js'
import type { EventSink, OutcomeReporter } from './watch-events.js'

export interface PauseControl {
  /** The mass change guard: true when these changes paused pushing. */
  guard(changed: ReadonlySet<string>, deleted: ReadonlySet<string>): Promise<boolean>
  /** Pauses pushing (unless paused already) and says so. */
  pauseFor(info: PauseInfo): Promise<void>
  /** Whether pushing is paused (the pause file). */
  paused(): Promise<boolean>
  /** After a run that planned everything while paused: what the pause holds now. */
  whilePaused(pushing: string[]): Promise<void>
  /** Whether to hold a poll's pushes this time (a checkout under way; the guard may pause). */
  holdPushes(changes: LocalChanges): Promise<boolean>
  /** The held changes were pushed (the local page's release): the pause lifts. */
  lift(): Promise<void>
  /** A pause left by an earlier daemon is told at start-up. */
  announce(): Promise<void>
}

export function createPauseControl(p: {
  root: string
  thresholds: MassChangeThresholds | undefined
  engine: Pick<WatchEngine, 'tracked'>
  emit: EventSink
  reporter: OutcomeReporter
  /** Paths the watcher has seen but not delivered yet (a batch gathering, git at work). */
  pending: () => number
  /** The next full request plans everything. */
  requireFull: () => void
}): PauseControl {
  const { root, emit, reporter } = p
  const recent = createChangeWindow()

  async function guard(changed: ReadonlySet<string>, deleted: ReadonlySet<string>): Promise<boolean> {
    const counts = recent.add(changed, deleted)
    // Below this many paths no workspace size makes a mass change, so the state is not read.
    if (counts.changed <= minPausePaths(p.thresholds)) return false
    const tracked = p.engine.tracked() ?? (await trackedCount(root))
    const decision = decideMassChange({ ...counts, tracked }, p.thresholds)
    if (!decision.pause) return false
    await pauseFor(pauseInfoFor(decision, changed))
    return true
  }

  async function pauseFor(info: PauseInfo): Promise<void> {
    if (await readPause(root)) return
    await setPause(root, info)
    emit({ event: 'paused', ...info })
    reporter.pause(heldByPause(info))
    recent.clear()
  }

  // What the pause holds is told with the paths it holds now; once none is left (restored,
  // reverted, a checkout switched back), the pause lifts.
  async function whilePaused(pushing: string[]): Promise<void> {
    const info = await readPause(root)
    if (!info) return
    if (pushing.length > 0 || p.pending() > 0) {
      reporter.pause(heldByPause(info, pushing))
      // A batch still gathering may be the restore: the next poll looks at everything again.
      if (pushing.length === 0) p.requireFull()
      return
    }
    await clearPause(root)
    recent.clear()
    emit({ event: 'resumed', reason: 'nothing the pause held is left to push (restored or reverted)' })
    reporter.pause(undefined)
  }

  return {
    guard,
    pauseFor,
    paused: async () => (await readPause(root)) !== undefined,
    whilePaused,
    // A batch still gathering may be a checkout under way: let the guard see it whole first.
    holdPushes: async ({ changed, deleted }) =>
      p.pending() > 0 || (await guard(new Set(changed), new Set(deleted))),
    async lift() {
      await clearPause(root)
      recent.clear()
    },
    async announce() {
      const paused = await readPause(root)
      if (paused) {
        emit({ event: 'paused', ...paused })
        reporter.pause(heldByPause(paused))
      }
    },
  }
}
