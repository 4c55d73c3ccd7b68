// Which media bytes were compared with the server's, and when (ItemState.verifiedAt). The
// upstream server gives nothing to compare cheaply: no dates or sizes in the listing, no ETag,
// Last-Modified or length on a download. So a replacement in the UI under the same name shows
// only when the bytes are read again: on request (--checksum), by watch's paced re-reads
// (watch/media-verifier.ts), and by every download and upload. Until then the item is
// "unverified", and status says so instead of "clean".
//
// On the spec dialect the listing carries updateDate, which the server moves with every upload
// (and rename): an unchanged updateDate vouches for the bytes, so such items are verified by the
// listing itself and never reported. That trusts the server to keep its own contract; no byte is
// read to check it.

import type { StateStore } from '../../state/state-file.js'
import { mediaPath } from './media-plan.js'
import type { MediaRun } from './media-snapshot.js'

export interface UnverifiedMedia {
  path: string
  id: string
  /** When its bytes were last compared with the server's; null: never recorded. */
  verifiedAt: string | null
}

/** Records the bytes this run compared and found to be the base (items it did not change too). */
export function recordVerified(store: StateStore, media: MediaRun | undefined, at: string): void {
  if (!media) return
  for (const id of media.verified) {
    const base = media.base.get(id)
    const remote = media.match.remote.get(id)
    if (!base || !remote || remote.sha256 !== base.sha256) continue
    const path = mediaPath(base.rel)
    if (store.get(path)?.baseHash === base.sha256) store.verified(path, at)
  }
}

/**
 * The synced media items whose bytes this run could not vouch for: the server lists them
 * without a revision and their bytes were not read now. Oldest verification first.
 */
export function unverifiedMedia(
  store: StateStore,
  media: MediaRun | undefined,
  skip: (path: string) => boolean,
): UnverifiedMedia[] {
  if (!media) return []
  const found: UnverifiedMedia[] = []
  for (const [id, base] of media.base) {
    const remote = media.match.remote.get(id)
    if (remote?.rev !== '' || media.verified.has(id)) continue
    const path = mediaPath(base.rel)
    if (skip(path)) continue
    found.push({ path, id, verifiedAt: store.get(path)?.verifiedAt ?? null })
  }
  return found.sort(oldestVerifiedFirst)
}

/** The order status lists unverified media in: never verified first, then oldest, then by path. */
export function oldestVerifiedFirst(a: UnverifiedMedia, b: UnverifiedMedia): number {
  return (a.verifiedAt ?? '').localeCompare(b.verifiedAt ?? '') || a.path.localeCompare(b.path)
}
