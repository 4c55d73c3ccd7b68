// Watch's rolling re-read of media bytes the server cannot vouch for (engine/media/
// media-verified.ts): upstream lists media without dates or sizes and its downloads carry no
// ETag, Last-Modified or length, so a file replaced in the UI under the same name shows only in
// its bytes. One item at a time, the least recently verified first, paced by a budget per hour
// (watch.verifyMedia: requestsPerHour, megabytesPerHour), through the client's one queue, so the
// rate limit holds with the runs' own requests. Every item is read again within
// items / requestsPerHour hours while the megabytes allow it; an item larger than the whole
// hourly byte budget is read when nothing else was in the last hour.
//
// Bytes equal to the base: the item's verifiedAt moves on. Other bytes, or none: the next full
// run reads the item again (MediaDeps.recheck) and plans the pull or the conflict as any run does.

import { startPoller } from './poller.js'

export interface VerifyBudget {
  requestsPerHour: number
  megabytesPerHour: number
}

export interface VerifyCandidate {
  id: string
  path: string
  sha256: string
  /** The local file's size: what reading the server's copy should cost. */
  size: number
  verifiedAt: string | null
}

export interface MediaVerifierOptions {
  budget: VerifyBudget
  /** The synced media items the server lists without a revision. */
  candidates: () => VerifyCandidate[]
  /** The server's bytes of an item: their sha256 and size, or undefined when it is gone. */
  hash: (id: string) => Promise<{ sha256: string; size: number } | undefined>
  /** The bytes are the base: record when. */
  verified: (candidate: VerifyCandidate, at: string) => void
  /**
   * The bytes are not the base (or the item is gone): read it again in a full run. `told`: these
   * same bytes against this same base were found before (an item not taken in yet, a conflict):
   * nothing new to tell, though the full run is asked for again.
   */
  changed: (candidate: VerifyCandidate, told: boolean) => void
  onError: (error: unknown) => void
  now?: () => number
}

const HOUR_MS = 3_600_000

export interface MediaVerifier {
  stop(deadlineMs?: number): Promise<void>
}

export function startMediaVerifier(opts: MediaVerifierOptions): MediaVerifier | undefined {
  const { requestsPerHour, megabytesPerHour } = opts.budget
  if (requestsPerHour <= 0) return undefined
  const now = opts.now ?? Date.now
  const byteBudget = megabytesPerHour * 1024 * 1024
  /** What was read in the last hour: when, and how many bytes. */
  const spent: { at: number; bytes: number }[] = []
  /** When this daemon last read each item (its verifiedAt moves only when the bytes agreed). */
  const readAt = new Map<string, string>()
  /** What each item's last read found that was not its base: the base's sha256 and the server's. */
  const found = new Map<string, string>()
  const poller = startPoller({
    intervalMs: Math.ceil(HOUR_MS / requestsPerHour),
    task: async () => {
      const at = now()
      while (spent.length > 0 && spent[0]!.at <= at - HOUR_MS) spent.shift()
      const candidates = opts.candidates()
      if (candidates.length === 0) return
      // Never looked at first, then the oldest. An item whose bytes differed and were not taken
      // in yet (a conflict) counts as looked at when it was read, so it cannot starve the rest.
      const lookedAt = (c: VerifyCandidate) => {
        const read = readAt.get(c.id) ?? ''
        const verified = c.verifiedAt ?? ''
        return read > verified ? read : verified
      }
      // One pass for the oldest: a tick reads one item, so ordering them all would be waste.
      let next = candidates[0]!
      let nextAt = lookedAt(next)
      for (const candidate of candidates) {
        const at = lookedAt(candidate)
        if (at < nextAt) [next, nextAt] = [candidate, at]
      }
      const used = spent.reduce((sum, s) => sum + s.bytes, 0)
      if (used > 0 && used + next.size > byteBudget) return
      const got = await opts.hash(next.id)
      spent.push({ at, bytes: got?.size ?? next.size })
      readAt.set(next.id, new Date(now()).toISOString())
      if (got?.sha256 === next.sha256) {
        found.delete(next.id)
        opts.verified(next, new Date(now()).toISOString())
        return
      }
      const finding = `${next.sha256} ${got?.sha256 ?? 'gone'}`
      const told = found.get(next.id) === finding
      found.set(next.id, finding)
      opts.changed(next, told)
    },
    onError: (error) => opts.onError(error),
  })
  return { stop: (deadlineMs) => poller.stop(deadlineMs) }
}
