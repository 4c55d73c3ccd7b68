// Under watch, an item's publish waits until its saves pause (watch.publishQuietMs): an editor
// that saves five times in ten seconds pushes five times, but the site gets one deployment (a
// git deployer makes one commit per publish). A publish the run holds back is still owed in the
// state (ItemState.deploy); when the item has been quiet long enough, its path is queued again,
// and that run's plan finds the owed publish and carries it out. A daemon that stops first
// leaves it owed: the next run (watch's start-up reconcile, a push) publishes it.

export interface PublishQuiet {
  /** The watcher delivered saves of these paths. */
  saved(paths: Iterable<string>): void
  /** Whether a publish of `path` waits now; if so, `path` is queued again once it is quiet. */
  defer(path: string): boolean
  close(): void
}

/** Past this many remembered saves, the ones already quiet are forgotten. */
const PRUNE_PAST = 1024

export function createPublishQuiet(
  quietMs: number,
  /** Queues the paths whose held publish may go now. */
  onQuiet: (paths: string[]) => void,
  now: () => number = Date.now,
): PublishQuiet {
  const lastSave = new Map<string, number>()
  const timers = new Map<string, NodeJS.Timeout>()

  function wake(path: string): void {
    timers.delete(path)
    const left = (lastSave.get(path) ?? 0) + quietMs - now()
    // Saved again while waiting: wait out the new quiet period.
    if (left > 0) {
      schedule(path, left)
      return
    }
    lastSave.delete(path)
    onQuiet([path])
  }

  function schedule(path: string, inMs: number): void {
    if (timers.has(path)) return
    const timer = setTimeout(() => wake(path), inMs)
    timer.unref?.()
    timers.set(path, timer)
  }

  return {
    saved(paths) {
      const at = now()
      for (const path of paths) lastSave.set(path, at)
      // Saves long quiet and waited on by no timer say nothing any more (a checkout's thousands).
      if (lastSave.size > PRUNE_PAST)
        for (const [path, last] of lastSave)
          if (last + quietMs <= at && !timers.has(path)) lastSave.delete(path)
    },
    defer(path) {
      const last = lastSave.get(path)
      if (last === undefined || quietMs === 0) return false
      const left = last + quietMs - now()
      if (left <= 0) {
        lastSave.delete(path)
        return false
      }
      schedule(path, left)
      return true
    },
    close() {
      for (const timer of timers.values()) clearTimeout(timer)
      timers.clear()
    },
  }
}
