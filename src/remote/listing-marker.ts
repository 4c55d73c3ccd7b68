// How a listing was seen, to ask the server cheaply whether it changed since (watch's remote
// poll): its ETag for a conditional GET, else the sha1 of its bytes.

import { createHash } from 'node:crypto'
import type { Answer } from './answer.js'
import type { HttpRequest, HttpResponse } from './http.js'

/**
 * How a listing was last seen, to ask whether it changed since: the server's ETag when it sends
 * one (then one 304 answers, with no body to read), else the sha1 of its bytes.
 */
export interface ListingMarker {
  etag?: string
  digest?: string
}

export function listingMarker(res: HttpResponse): ListingMarker | undefined {
  const etag = res.headers.etag
  if (typeof etag === 'string' && etag !== '') return { etag, ...(res.digest ? { digest: res.digest } : {}) }
  return res.digest ? { digest: res.digest } : undefined
}

/**
 * Whether the listing at `path` is what `marker` saw: a conditional GET answered 304, or a body
 * whose bytes hash to the same sha1 (a server without ETags, or one that ignores If-None-Match).
 */
export async function listingUnchangedSince(
  send: (request: HttpRequest) => Promise<Answer>,
  path: string,
  marker: ListingMarker | undefined,
): Promise<boolean> {
  if (marker === undefined) return false
  const hashed = digestSink()
  const answer = await send({
    method: 'GET',
    path,
    sink: hashed.sink,
    ...(marker.etag ? { headers: { 'if-none-match': marker.etag } } : {}),
  })
  switch (answer.kind) {
    case 'not-modified':
      return marker.etag !== undefined
    case 'ok':
      return marker.digest !== undefined && hashed.digest() === marker.digest
    case 'retry':
    case 'ambiguous':
      throw answer.error
    default:
      return false
  }
}

/**
 * A `sink` that keeps only the sha1 of the body, hex, nothing buffered: a 10,000-item listing
 * compared with an earlier one costs a hash, not 8 MB held and parsed. Starts over on a retry.
 */
export function digestSink(): {
  sink: (body: AsyncIterable<Buffer>) => Promise<void>
  digest(): string | undefined
} {
  let digest: string | undefined
  return {
    async sink(body) {
      const hash = createHash('sha1')
      for await (const chunk of body) hash.update(chunk)
      digest = hash.digest('hex')
    },
    digest: () => digest,
  }
}
