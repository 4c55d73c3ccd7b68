// When the daemon saves the state that edit-only runs left unsaved (docs/watch.md "The run"):
// once edits have paused for STATE_SAVE_QUIET_MS, and at least every STATE_SAVE_MAX_DELAY_MS
// while they go on. A save rewrites the whole file (JSON that grows with the items, in which an
// edit waits, and a flush of the file system): after every edit it would be a good part of each
// edit's cost (docs/benchmarks.md, "Figures behind code comments"). Full runs save at their end as always. A crash in between
// loses only records of changes the server confirmed, which the next start adopts again (both
// sides equal: merge-base; a file edited again since: the push journal, landed-pushes.ts).
// This is watch policy, so it lives here; the engine only says that something is unsaved.

export const STATE_SAVE_QUIET_MS = 2_000
export const STATE_SAVE_MAX_DELAY_MS = 30_000

export interface SaveTimer {
  /** An edit-only run left the state unsaved: save once edits pause, or at the latest deadline. */
  unsaved(): void
  /** Drops the pending save (shutdown saves on its own). */
  cancel(): void
}

export function createSaveTimer(
  save: () => Promise<void>,
  onError: (error: unknown) => void,
  timing: { quietMs: number; maxDelayMs: number } = {
    quietMs: STATE_SAVE_QUIET_MS,
    maxDelayMs: STATE_SAVE_MAX_DELAY_MS,
  },
  now: () => number = Date.now,
): SaveTimer {
  let timer: NodeJS.Timeout | undefined
  let unsavedSince: number | undefined
  const cancel = () => {
    clearTimeout(timer)
    timer = undefined
    unsavedSince = undefined
  }
  return {
    unsaved() {
      const at = now()
      unsavedSince ??= at
      clearTimeout(timer)
      const delay = Math.min(timing.quietMs, unsavedSince + timing.maxDelayMs - at)
      timer = setTimeout(
        () => {
          cancel()
          save().catch(onError)
        },
        Math.max(0, delay),
      )
    },
    cancel,
  }
}
