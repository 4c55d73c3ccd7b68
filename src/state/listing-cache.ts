// .cms-sync/listings/<kind>.json: the last listing of each cacheable kind, so the next run asks
// with If-None-Match and reads a 304 from here (src/remote/listing-cache.ts says why, and which
// kinds are never kept). One file per kind: a header line (the URL, the ETag and the sha256 of
// the body) and the body as the server sent it. A file whose body does not match its sha256
// (cut short by a crash, edited by hand) is not used: the listing is read in full instead, so
// this folder can always be deleted and never makes a run wrong.

import { createHash } from 'node:crypto'
import { mkdir, readFile } from 'node:fs/promises'
import type { CachedListing, ListingCache } from '../remote/listing-cache.js'
import { writeFileAtomically } from '../workspace/atomic-write.js'
import { syncDirPath } from '../workspace/layout.js'

const NAME = /^[a-z]+$/
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

export function workspaceListingCache(root: string): ListingCache {
  const file = (name: string) => syncDirPath(root, 'listings', `${name}.json`)
  return {
    async read(name) {
      if (!NAME.test(name)) return undefined
      const content = await readFile(file(name), 'utf8').catch(() => undefined)
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
      await mkdir(syncDirPath(root, 'listings'), { recursive: true })
      const header = JSON.stringify({ url: listing.url, etag: listing.etag, sha256: sha256(listing.text) })
      // No fsync: a kept listing lost to a crash costs one full read, never a wrong answer.
      await writeFileAtomically(file(name), `${header}\n${listing.text}`, { fsync: false })
    },
  }
}
