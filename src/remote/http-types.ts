// A request as the transport sends it, and the response it reads (http.ts).

export type ResponseType = 'json' | 'text' | 'buffer' | 'auto'

export interface HttpRequest {
  method: string
  /** Path below the server URL, starting with `/`, query included. */
  path: string
  /** A plain value is sent as JSON; a Buffer or string as is (give `contentType`). */
  body?: unknown
  contentType?: string
  headers?: Record<string, string>
  /** How to read the body; `auto` = JSON when the server says JSON, text for text/*, else bytes. */
  responseType?: ResponseType
  /** Largest body accepted, in bytes; a sink's stream is stopped there too (none: a sink is not capped). */
  maxBytes?: number
  /**
   * Whether repeating the request is harmless (GET, DELETE, full-document replaces guarded by
   * the caller). When false, only failures where the server surely did not act are retried
   * (connection refused, 429); an ambiguous failure is thrown with `ambiguous: true`.
   */
  idempotent?: boolean
  /** For error messages. */
  itemId?: string
  /**
   * A body streamed from its source instead of held in memory (media uploads). A factory, so a
   * retry sends a fresh stream; give `contentType` and, when known, `contentLength`.
   */
  bodyStream?: () => AsyncIterable<Uint8Array>
  contentLength?: number
  /**
   * Reads a 2xx body as a stream (media downloads) instead of buffering it; the response then
   * has no body. Called again on a retry, so it must start over (e.g. truncate its temp file).
   */
  sink?: (body: AsyncIterable<Buffer>) => Promise<void>
  /**
   * Gives the request up (and its retries) when aborted; the caller then never sees an
   * answer, only the signal's reason. For reads a run asked for ahead and no longer needs.
   */
  signal?: AbortSignal
  /** Also give the sha1 of a 2xx body's bytes (watch compares listings from poll to poll). */
  digest?: boolean
  /** Also give a 2xx body's bytes as they came (a listing kept for the next conditional read). */
  keepBytes?: boolean
  /**
   * A 3xx is this route's answer, returned like any other (upstream's logout answers 302 to its
   * start page once the token is ended); elsewhere a redirect is refused, never followed.
   */
  redirectIsAnswer?: boolean
}

export interface HttpResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: unknown
  /** With `digest`: the sha1 of the 2xx body's bytes, hex. */
  digest?: string
  /** With `keepBytes`: the 2xx body's bytes. */
  bytes?: Buffer
}
