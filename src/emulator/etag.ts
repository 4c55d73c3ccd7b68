// Conditional GETs as the real server answers them: Express adds a weak ETag (the body's length
// in hex and the base64 of its sha1) to every 200 answer with a body, and answers a GET whose
// If-None-Match names it with 304 and no body (reference/upstream-server.md; seen on the real
// server's listings). Both dialects do it: a client that remembers a listing's ETag learns
// with one small answer that the kind is unchanged. The spec dialect makes a listing's ETag of
// the versions of the collections it reads instead (versionEtag), so its 304 costs no body.

import { createHash } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Reply } from './http.js'
import type { Store } from './store.js'

/** Express's weak ETag of a body (the `etag` package, `weak: true`). */
export function weakEtag(body: string | Buffer): string {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body
  if (bytes.length === 0) return 'W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"'
  const hash = createHash('sha1').update(bytes).digest('base64').slice(0, 27)
  return `W/"${bytes.length.toString(16)}-${hash}"`
}

/**
 * A listing's ETag from the versions of the collections it reads (Store.version), the store's
 * epoch and the URL (other parameters, another listing): any write to one of them is a new ETag,
 * and no body is built or hashed to make it. Shaped as Express's, a client cannot tell them apart.
 */
export function versionEtag(store: Store, collections: readonly string[], url: URL): string {
  const query = new URLSearchParams(url.searchParams)
  // A token sent in the query names the caller, not the listing.
  query.delete('token')
  const hash = createHash('sha1').update(`${store.epoch}\n${url.pathname}?${query}`)
  let writes = 0
  for (const name of collections) {
    const version = store.version(name)
    writes += version
    hash.update(`\n${name}\n${version}`)
  }
  return `W/"${writes.toString(16)}-${hash.digest('base64').slice(0, 27)}"`
}

/** Whether If-None-Match names this ETag (weak comparison, as Express's `fresh` does). */
export function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true
  const bare = (tag: string) => tag.trim().replace(/^W\//, '')
  return ifNoneMatch.split(',').some((tag) => bare(tag) === bare(etag))
}

/** The reply with its ETag, or a 304 when the client already holds this body. */
export function conditional(req: IncomingMessage, reply: Reply): Reply {
  const body = reply.body
  if ((req.method !== 'GET' && req.method !== 'HEAD') || reply.status !== 200) return reply
  if (typeof body !== 'string' && !Buffer.isBuffer(body)) return reply
  const etag = weakEtag(body)
  const ifNoneMatch = req.headers['if-none-match']
  if (typeof ifNoneMatch === 'string' && matches(ifNoneMatch, etag)) return { status: 304, headers: { etag } }
  return { ...reply, headers: { ...reply.headers, etag } }
}
