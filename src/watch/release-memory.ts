// Gives memory back once the daemon is done with a big piece of work. A full run at 10,000
// items parses the 8 MB content listing and plans every file: about 100 MB allocated, of which
// 20 MB stays live. V8 grows its heap for that and only gives it back when its memory reducer
// runs, 20-30 s after the run goes quiet; meanwhile the idle daemon holds 150-180 MB. A quiet
// poll streams the listings through a hash: 8 MB of socket buffers a time, which stay mapped
// until a collection that an idle process (allocating nothing) never triggers, so each poll
// added 8 MB until V8's external memory limit forced a full collection (tens of ms).
//
// So: a full collection at the end of a full run (the run has just spent a second or more; the
// collection about 30-60 ms, which the memory reducer spends anyway, later and more than once),
// and a young-generation one after a quiet poll (a few ms) while the young generation is still
// the size the full run grew it to: it frees the poll's buffers and lets V8 shrink it once
// allocation has calmed down. Once it is small again a poll fills it and V8 collects it as it
// goes; a forced collection then only promotes the poll's connection objects to the old
// generation, which V8 (its limit set tight by the memory reducer) answered with a full
// collection after every poll: 6 a minute instead of 3 (measured, 10 s polls).
//
// The collector is reached through V8's own extension (the documented `--expose-gc`, enabled
// from inside the process: `node cms-sync` needs no flags). Should that ever fail, nothing is
// released early and V8 does it later, as before.

import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

type Collect = (options?: { type: 'minor' }) => void

let collect: Collect | null | undefined

function collector(): Collect | undefined {
  if (collect === undefined) {
    try {
      setFlagsFromString('--expose-gc')
      // The flag adds `gc` to contexts created from now on; the main one was made without it.
      const found = runInNewContext('gc') as unknown
      collect = typeof found === 'function' ? (found as Collect) : null
    } catch {
      collect = null
    }
  }
  return collect ?? undefined
}

/** V8 starts the young generation at 1-2 MB and grows it up to 3 x 16 MB under a full run. */
const LARGE_YOUNG_GENERATION = 8 * 1024 * 1024

function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0
}

/**
 * A full run's data can still be held for a moment after it is over: an optimising compile of
 * one of its functions running in the background keeps what it references alive (measured:
 * 15 MB left after about one run in three; none with that compiler off). A second collection
 * shortly after gets it.
 */
const FOLLOW_UP_MS = 1_000
let followUp: NodeJS.Timeout | undefined

/** `full`: after a run that allocated a lot (a full reconcile); `young`: after a quiet poll. */
export function releaseMemory(after: 'full' | 'young'): void {
  const gc = collector()
  if (!gc) return
  if (after === 'young') {
    if (youngGenerationBytes() > LARGE_YOUNG_GENERATION) gc({ type: 'minor' })
    return
  }
  collectAll(gc)
  clearTimeout(followUp)
  followUp = setTimeout(() => collectAll(gc), FOLLOW_UP_MS)
  // A daemon shutting down does not wait for it.
  followUp.unref()
}

function collectAll(gc: Collect): void {
  gc()
  // The pages the first one emptied are returned to the system by the next one: RSS right
  // after a start-up reconcile 117-120 MB with one, 111 MB with two (about 20 ms more).
  gc()
  // A big string (a listing's text) is kept outside the heap; a young collection lets it go.
  gc({ type: 'minor' })
}
