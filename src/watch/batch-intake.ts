// A batch from the watcher, taken in: our own writes dropped, the pause or the mass change guard
// asked, then queued (a flood as a full run).

import type { LocalBatchInfo } from './local-changes.js'
import { pauseForBranchSwitch } from './mass-change.js'
import type { OwnWrites } from './own-writes.js'
import type { PauseControl } from './pause-control.js'
import type { PublishQuiet } from './publish-quiet.js'
import type { WatchRuns } from './run-policy.js'
import type { WorkQueue } from './work-queue.js'

export function createBatchIntake(b: {
  stillThere: () => boolean
  ownWrites: OwnWrites
  quiet: PublishQuiet
  pauses: PauseControl
  runs: WatchRuns
  queue: WorkQueue
}): (paths: Set<string>, info: LocalBatchInfo) => Promise<void> {
  return async (paths, info) => {
    if (!b.stillThere()) return
    const { runs, queue } = b
    // Git writes many files at once, deleting and renaming: the next poll states every file.
    if (info.git) runs.requireLook()
    const changed = await b.ownWrites.filterBatch(paths) // first, so a big pull never trips the guard
    if (changed.size === 0) return
    b.quiet.saved(changed)
    // A branch switch brings that branch's files: a pause naming it, never a push.
    if (info.git?.switched) await b.pauses.pauseFor(pauseForBranchSwitch(info.git, changed))
    else await b.pauses.guard(changed, new Set([...info.deleted].filter((p) => changed.has(p))))
    if (info.flood) {
      runs.requireFull()
      runs.requireLook()
      void queue.requestFull()
    } else queue.add(changed)
  }
}
