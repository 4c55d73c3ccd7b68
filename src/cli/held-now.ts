// What `watch` holds, as `status` and `doctor` show it: the guards run over the same plan as
// the daemon's (engine/held.ts), and the pause with the paths it holds now. One truth: nothing
// is read from the daemon, so it is right whether or not watch runs.

import type { HeldChange } from '../engine/held.js'
import { changesOf } from '../engine/plan.js'
import { heldByGuards, inScope, SELECT } from '../engine/plan-and-apply.js'
import type { EngineDeps, PlannedRun } from '../engine/plan-apply-types.js'
import { heldByPause, type PauseInfo } from '../watch/mass-change.js'

const PUSH_SIDE = new Set(['push', 'delete-remote', 'merge'])

export async function heldNow(
  deps: EngineDeps,
  planned: PlannedRun,
  pause: PauseInfo | undefined,
  scope: readonly string[] = [],
): Promise<HeldChange[]> {
  const { held: guarded } = await heldByGuards(deps, planned, planned.plan.items.filter(SELECT.sync), {
    allowDeletes: false,
    hold: true,
  })
  const pushing = changesOf(planned.plan)
    .filter((item) => PUSH_SIDE.has(item.action))
    .map((item) => item.path)
  return heldWithPause(guarded, pause, pushing, scope)
}

/** The guards' held changes and the pause (holding `pushing`, the paths it holds now), within `scope`. */
export function heldWithPause(
  guarded: readonly HeldChange[],
  pause: PauseInfo | undefined,
  pushing: readonly string[],
  scope: readonly string[],
): HeldChange[] {
  return (
    [...(pause ? [heldByPause(pause, pushing)] : []), ...guarded]
      .map((h) => {
        const paths = h.paths.filter((p) => inScope(p, scope))
        return paths.length === h.paths.length ? h : { ...h, paths, count: paths.length }
      })
      // A pause stands while nothing waits: only a push or sync lifts it, or a restore under watch.
      .filter((h) => h.paths.length > 0 || h.action === 'push')
  )
}
