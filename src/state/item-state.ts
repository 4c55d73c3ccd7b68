// One item's base as the state records it, and the target it was synced with: the shape that
// the state file, the committed lock (committed-base.ts) and the push journal all hold, kept
// apart from state-file.ts so those modules share the shape without importing one another.

import type { Kind } from '../workspace/kinds.js'
import type { StatSnapshot } from '../workspace/known-file.js'

export type { StatSnapshot }

export interface Target {
  server: string
  project: string
  environment: string
}

export interface ItemState {
  kind: Kind
  id: string
  path: string
  baseHash: string
  /** content: updateDate; other kinds: the hash of the canonical remote. */
  remoteRev: string
  /** The file as it was when baseHash was taken; equal stat means equal content. */
  stat?: StatSnapshot
  /** content only: kept so a write never resets it (upstream sets a missing one to 1970). */
  createDate?: string | null
  /** media only: the bytes' sha256, and the name and folder the server held at the last sync. */
  media?: MediaBase
  /**
   * media only: when the server's bytes were last read (a download, an upload, a hash) and found
   * to be the base, as an ISO time. Upstream lists media without dates or sizes, so between two
   * reads a replacement in the UI is not seen: status says how long that has been (never: absent).
   */
  verifiedAt?: string
  /** The server lists the item from the parent project it inherits from (locked there). */
  inherited?: true
  /**
   * The base came from cms-sync.lock, not from a sync on this machine: where the server cannot
   * say whether media bytes changed (upstream has no media dates), they are checked before a
   * push (media-match.ts), and a delete or overwrite on its word needs the file's git history to
   * agree (engine/lock-proof.ts). Gone once the item is synced here.
   */
  fromLock?: true
  /**
   * content only: the deployed copy is behind the base, the publish or unpublish that brings it
   * level is still to do (recorded with the write that calls for it, gone once it is done). A
   * run retries it (engine/publish-plan.ts).
   */
  deploy?: 'publish' | 'unpublish'
}

export interface MediaBase {
  sha256: string
  /** The server's name, which upstream may have rewritten: maps back to the local name without a rename. */
  name: string
  /** Folder path without slashes at the ends, `''` for the root. */
  folder: string
}
