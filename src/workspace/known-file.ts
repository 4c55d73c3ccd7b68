// What a scan may trust about a file from its last sync. The state (src/state/state-file.ts)
// records these for every item; the scan, a layer below it, names only what it reads.

import type { StatSnapshot } from '../util/atomic-write.js'

/** A file's size, mtime and inode when its hash was taken: an equal stat means equal content. */
export type { StatSnapshot }

/** The fields of the state's record of an item (ItemState) that the scans read. */
export interface KnownFile {
  /** The item's id as the record holds it. */
  id?: string
  baseHash: string
  stat?: StatSnapshot
  /** media only: the bytes' sha256. */
  media?: { sha256: string }
}
