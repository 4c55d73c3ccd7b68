// A listing kept with its ETag, so the next read of a listing that did not change is one
// conditional GET answered 304 (the real server and the emulator send weak ETags), not the
// whole listing again: at 10,000 items 8 MB per kind on every status, pull and push.
//
// A workspace keeps them in .cms-sync/listings/<kind>.json: a header line (the URL, the ETag and
// the sha256 of the body) and the body as the server sent it. A file whose body does not match
// its sha256 (cut short by a crash, edited by hand) is not used: the listing is read in full
// instead, so the folder can always be deleted and never makes a run wrong.

import { createHash } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { writeFileAtomically } from '../workspace/atomic-write.js'
import { SYNC_DIR, syncDirPath } from '../workspace/layout.js'
import { readNoFollow, refuseLinks } from '../workspace/no-follow.js'
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

const NAME = /^[a-z]+$/
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

export function workspaceListingCache(root: string): ListingCache {
  const file = (name: string) => syncDirPath(root, 'listings', `${name}.json`)
  // Never read or written through a symbolic link (docs/reliability.md, issue 14).
  const rel = (name: string) => `${SYNC_DIR}/listings/${name}.json`
  return {
    async read(name) {
      if (!NAME.test(name)) return undefined
      const content = await readNoFollow(root, rel(name)).catch(() => undefined)
      const newline = content?.indexOf('\n') ?? -1
      if (content === undefined || newline < 0) return undefined
      let header: { url?: unknown; etag?: unknown; sha256?: unknown }
      try {
        header = JSON.parse(content.slice(0, newline))
      } catch {
        return undefined
      }
      const text = content.slice(newline + 1)
      if (typeof header.url !== 'string' || typeof header.etag !== 'string' || header.sha256 !== sha256(text))
        return undefined
      return { url: header.url, etag: header.etag, text }
    },
    async write(name, listing: CachedListing) {
      if (!NAME.test(name)) return
      refuseLinks(root, rel(name))
      await mkdir(syncDirPath(root, 'listings'), { recursive: true })
      const header = JSON.stringify({ url: listing.url, etag: listing.etag, sha256: sha256(listing.text) })
      // No fsync: a kept listing lost to a crash costs one full read, never a wrong answer.
      await writeFileAtomically(file(name), `${header}\n${listing.text}`, { fsync: false })
    },
  }
}
