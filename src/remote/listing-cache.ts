// A listing kept with its ETag, so the next read of a listing that did not change is one
// conditional GET answered 304 (the real server and the emulator send weak ETags), not the
// whole listing again: at 10,000 items 8 MB per kind on every status, pull and push. The
// remote layer asks for it by this shape; src/state/listing-cache.ts keeps it in .cms-sync/.

import type { RemoteKind } from './dialect.js'

export interface CachedListing {
  /** The listing's URL: an entry made for another server or project is never used. */
  url: string
  etag: string
  /** The body as the server sent it. */
  text: string
}

export interface ListingCache {
  /** The kept listing, or undefined (none, or damaged: then the listing is read in full). */
  read(name: string): Promise<CachedListing | undefined>
  write(name: string, listing: CachedListing): Promise<void>
}

/**
 * Kinds whose listing is never kept on disk: connection settings hold secrets (never written
 * to a file, design.md), and forms carry the entries people submitted.
 */
export const NEVER_CACHED: ReadonlySet<RemoteKind> = new Set<RemoteKind>(['connection', 'form'])
