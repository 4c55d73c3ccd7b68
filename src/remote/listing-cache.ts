// A listing kept with its ETag, so the next read of a listing that did not change is one
// conditional GET answered 304 (the real server and the emulator send weak ETags), not the
// whole listing again: at 10,000 items 8 MB per kind on every status, pull and push. Media
// (src/remote/media.ts) is kept the same way.
//
// A workspace keeps them in .cms-sync/listings/: <kind>.json, the body as the server sent it, and
// <kind>.head.json, its URL, ETag and the sha256 of that body. A file whose body does not match
// its sha256 (cut short by a crash, edited by hand) is not used: the listing is read in full
// instead, so the folder can always be deleted and never makes a run wrong.
//
// A head may also say `clean`: the digest of the state a status found matching the listing
// item for item (src/engine/remote-snapshot.ts). While the listing answers 304 and the state
// is still that one, every server item is its base: the kept body is parsed only when an
// item's server copy is read. A new body is kept with a new head, which says nothing of it.
//
// The tool's own writes to a kind drop its kept listing, and a kept listing never decides a
// delete alone (an item it lacks is read by id first): a server or proxy whose ETag does not
// follow the listing then costs a read, never a lost item.

import { createHash } from 'node:crypto'
import { mkdir, rm } from 'node:fs/promises'
import { writeFileAtomically } from '../util/atomic-write.js'
import { absolute, SYNC_DIR, syncDirPath } from '../workspace/layout.js'
import { readNoFollow, refuseLinks } from '../workspace/no-follow.js'
import type { RemoteKind } from './dialect.js'

export interface CachedListing {
  /** The listing's URL: an entry made for another server or project is never used. */
  url: string
  etag: string
  /** The body as the server sent it. */
  text: string
  /** The digest of the state a status found matching this listing (see above). */
  clean?: string
  /** With `clean`: the ids whose listed copy names a schedule, as the status noted them. */
  dated?: string[]
}

export interface ListingCache {
  /** The kept listing, or undefined (none, or damaged: then the listing is read in full). */
  read(name: string): Promise<CachedListing | undefined>
  /** Keeps a listing: its body as the bytes the server sent. */
  write(
    name: string,
    listing: Omit<CachedListing, 'text' | 'clean' | 'dated'> & { bytes: Uint8Array },
  ): Promise<void>
  /** Notes that the state `clean` matches the kept listing, if it is still the one with `etag`. */
  markClean(name: string, etag: string, clean: string, dated?: readonly string[]): Promise<void>
  /**
   * Drops the kept listing (its head: the body alone is never used). After the tool's own write
   * of the kind: a server or proxy whose ETag does not change with the listing would answer 304
   * to the old one for ever, and the write would look undone.
   */
  forget(name: string): Promise<void>
}

/**
 * Kinds whose listing is never kept on disk: connection settings hold secrets (never written
 * to a file, design.md), and forms carry the entries people submitted.
 */
export const NEVER_CACHED: ReadonlySet<RemoteKind> = new Set<RemoteKind>(['connection', 'form'])

const NAME = /^[a-z]+$/
const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex')

export function workspaceListingCache(root: string): ListingCache {
  // Never read or written through a symbolic link: one could lead outside the workspace
  // (docs/reliability.md).
  const body = (name: string) => `${SYNC_DIR}/listings/${name}.json`
  const head = (name: string) => `${SYNC_DIR}/listings/${name}.head.json`
  return {
    async read(name) {
      if (!NAME.test(name)) return undefined
      let header: { url?: unknown; etag?: unknown; sha256?: unknown; clean?: unknown; dated?: unknown }
      let text: string
      try {
        header = JSON.parse(await readNoFollow(root, head(name)))
        text = await readNoFollow(root, body(name))
      } catch {
        return undefined
      }
      if (typeof header.url !== 'string' || typeof header.etag !== 'string' || header.sha256 !== sha256(text))
        return undefined
      const dated =
        Array.isArray(header.dated) && header.dated.every((id) => typeof id === 'string')
          ? { dated: header.dated as string[] }
          : {}
      const clean = typeof header.clean === 'string' ? { clean: header.clean, ...dated } : {}
      return { url: header.url, etag: header.etag, text, ...clean }
    },
    async markClean(name, etag, clean, dated) {
      if (!NAME.test(name)) return
      let header: { etag?: unknown; clean?: unknown; dated?: unknown }
      try {
        header = JSON.parse(await readNoFollow(root, head(name)))
      } catch {
        return
      }
      const note = dated ? [...dated] : undefined
      const same = header.clean === clean && JSON.stringify(header.dated) === JSON.stringify(note)
      if (header.etag !== etag || same) return
      refuseLinks(root, head(name))
      // The head alone: its sha256 still names the body it was written with, so a body another
      // run replaced meanwhile never passes with this head.
      await writeFileAtomically(
        absolute(root, head(name)),
        `${JSON.stringify({ ...header, clean, dated: note })}\n`,
        {
          fsync: false,
        },
      )
    },
    async forget(name) {
      if (!NAME.test(name)) return
      refuseLinks(root, head(name))
      await rm(absolute(root, head(name)), { force: true })
    },
    async write(name, listing) {
      if (!NAME.test(name)) return
      refuseLinks(root, body(name))
      refuseLinks(root, head(name))
      await mkdir(syncDirPath(root, 'listings'), { recursive: true })
      // The body as it came, from the response's own buffer: no second copy of a listing that
      // weighs 80 MB at 100,000 items. Its header names its sha256, so a body and a header from
      // different runs (a crash between the two writes) never pass as a pair.
      // No fsync: a kept listing lost to a crash costs one full read, never a wrong answer.
      await writeFileAtomically(absolute(root, body(name)), listing.bytes, { fsync: false })
      const header = JSON.stringify({ url: listing.url, etag: listing.etag, sha256: sha256(listing.bytes) })
      await writeFileAtomically(absolute(root, head(name)), `${header}\n`, { fsync: false })
    },
  }
}
