// Conditional GETs as the real server answers them: Express adds a weak ETag (the body's length
// in hex and the base64 of its sha1) to every 200 answer with a body, and answers a GET whose
// If-None-Match names it with 304 and no body (reference/upstream-server.md; seen on the real
// server's listings). Both dialects do it: a client that remembers a listing's ETag learns
// with one small answer that the kind is unchanged.

import { createHash } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Reply } from './http.js'

/** Express's weak ETag of a body (the `etag` package, `weak: true`). */
export function weakEtag(body: string | Buffer): string {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body
  if (bytes.length === 0) return 'W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"'
  const hash = createHash('sha1').update(bytes).digest('base64').slice(0, 27)
  return `W/"${bytes.length.toString(16)}-${hash}"`
}

/** Whether If-None-Match names this ETag (weak comparison, as Express's `fresh` does). */
function matches(ifNoneMatch: string, etag: string): boolean {
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
