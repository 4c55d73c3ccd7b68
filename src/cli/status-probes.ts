// What `status` asks beside the plan, in one call: whether the server takes the token, whether
// watch paused pushing, and what the server has scheduled. The call starts with the listings, so
// the token check and the pause file cost no wait of their own; the schedule needs the plan (it
// asks only about items whose file or server copy names a date) and follows it.

import { RemoteError, withoutNextStep } from '../remote/errors.js'
import type { RemoteClient } from '../remote/index.js'
import { type PauseInfo, readPause } from '../watch/mass-change.js'
import { type ScheduledChange, type ScheduleSides, upcomingSchedule } from './scheduled.js'

export interface StatusProbes {
  /** Why the server refuses the token; undefined when it takes it, or when none was checked. */
  tokenRefused: string | undefined
  /** A paused watcher pushes nothing until told: the first thing to know about the workspace. */
  watchPaused: PauseInfo | undefined
  scheduled: ScheduledChange[]
}

/**
 * Why the server refuses the token, or undefined when it takes it. Upstream answers every read
 * without a token, so a status made only of listings would say "clean" for a token that cannot
 * push anything.
 */
async function tokenRefusal(client: RemoteClient): Promise<string | undefined> {
  try {
    await client.checkToken()
    return undefined
  } catch (error) {
    if (error instanceof RemoteError && error.code === 'unauthorized')
      return `${withoutNextStep(error)}: reads work, but a push or sync would be refused; run \`cms-sync login\` or set CMS_SYNC_TOKEN`
    throw error
  }
}

/**
 * Starts the three probes while `planning` reads the listings. `anonymous` (status --anonymous):
 * there is no token to check, and nothing is claimed about one. Rejects with the first failure,
 * the plan's included; the caller awaits the plan first, so that one is reported as the plan's.
 */
export async function probeStatus(
  session: { client: RemoteClient; root: string; scope: readonly string[]; anonymous: boolean },
  planning: Promise<ScheduleSides>,
): Promise<StatusProbes> {
  const { client, root, scope, anonymous } = session
  const [tokenRefused, watchPaused, scheduled] = await Promise.all([
    anonymous ? undefined : tokenRefusal(client),
    readPause(root),
    planning.then((planned) => upcomingSchedule(client, root, planned, scope)),
  ])
  return { tokenRefused, watchPaused, scheduled }
}
