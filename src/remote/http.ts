// The HTTP layer under the client: one undici Agent (TLS verified unless the config opts out),
// every attempt through the shared rate-limited queue, a timeout on every request, capped
// response bodies, no redirects, and retries that never repeat a request the server may have
// applied. It knows nothing of resources: it moves requests and classifies failures.

import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { Logger } from 'pino'
import type { Dispatcher } from 'undici'
import { Agent } from 'undici'
import { findCause } from '../errors/find-cause.js'
import { secretFields } from '../workspace/connection-secrets.js'
import {
  cleanServerMessage,
  codeForStatus,
  isForeignErrorPage,
  notCmsSyncServer,
  RemoteError,
  type RemoteErrorCode,
  remoteError,
  routeOf,
} from './errors.js'
import {
  acquireQueue,
  emptyStats,
  type RateLimit,
  type RequestStats,
  type SharedQueue,
  type StatusClass,
} from './queue.js'
import { backoffDelayMs, parseRetryAfterMs, sleep } from './retry.js'

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
  send: (request: HttpRequest) => Promise<HttpResponse>,
  path: string,
  marker: ListingMarker | undefined,
): Promise<boolean> {
  if (marker === undefined) return false
  const hashed = digestSink()
  const res = await send({
    method: 'GET',
    path,
    sink: hashed.sink,
    ...(marker.etag ? { headers: { 'if-none-match': marker.etag } } : {}),
  })
  if (res.status === 304) return marker.etag !== undefined
  return (
    res.status >= 200 && res.status < 300 && marker.digest !== undefined && hashed.digest() === marker.digest
  )
}

export interface TransportOptions {
  server: string
  rateLimit: RateLimit
  token?: string | undefined
  /** Adds the token to a request in the dialect's way; without it the request is anonymous. */
  authHeaders?: (token: string) => Record<string, string>
  timeoutMs?: number
  maxRetries?: number
  tlsInsecure?: boolean
  logger?: Logger | undefined
  /** Backoff between retries; tests shorten it. */
  backoff?: { baseMs: number; capMs: number }
  /** A Retry-After longer than this fails the request instead of waiting. */
  maxRetryAfterMs?: number
}

export interface Transport {
  readonly server: string
  send(request: HttpRequest): Promise<HttpResponse>
  /** Turns a final non-2xx response into the RemoteError for it. */
  failure(request: HttpRequest, response: HttpResponse, what?: string, code?: RemoteErrorCode): RemoteError
  /** Uses this token from the next request on (a daemon that found a new login). */
  setToken(token: string | undefined): void
  stats(): RequestStats
  close(): Promise<void>
}

/** An error the caller may settle by re-reading: the server may or may not have applied the request. */
export type AmbiguousError = RemoteError & { ambiguous: true }

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

export function isAmbiguous(error: unknown): error is AmbiguousError {
  return typeof error === 'object' && error !== null && (error as { ambiguous?: unknown }).ambiguous === true
}

export const DEFAULT_TIMEOUT_MS = 30_000
export const DEFAULT_MAX_RETRIES = 4
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024
const DEFAULT_MAX_RETRY_AFTER_MS = 120_000

/** Connection failures that happen before any byte of the request reached the server. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
])
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'])
const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL/

/** A file system error of ours (it names a path and a system call) behind a transport failure. */
function localFileError(error: unknown): Error | undefined {
  return findCause(error, (e) => {
    const { path, syscall } = e as NodeJS.ErrnoException
    return typeof path === 'string' && typeof syscall === 'string'
  })
}

function errorCode(error: unknown): string {
  const e = error as { code?: unknown; cause?: { code?: unknown } }
  return String(e?.code ?? e?.cause?.code ?? '')
}

/** The server URL without a trailing slash; a path prefix (https://host/cms) is kept. */
export function normaliseServer(server: string): string {
  const url = new URL(server)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`not an http(s) URL: ${server}`)
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

function statusClass(status: number): StatusClass {
  if (status >= 500) return '5xx'
  if (status >= 400) return '4xx'
  if (status >= 300) return '3xx'
  return '2xx'
}

class BodyTooLarge extends Error {}

/** A sink failed to write its own file: passed on to the caller as it is, never retried. */
export class LocalSinkError extends Error {
  constructor(readonly local: unknown) {
    super((local as Error).message, { cause: local })
  }
}

async function readBody(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
  declared: unknown,
): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of capped(body as AsyncIterable<Buffer> & { destroy(): void }, maxBytes, declared))
    chunks.push(chunk)
  return Buffer.concat(chunks)
}

/** The body as it streams, stopped (BodyTooLarge) once it passes maxBytes or declares more. */
async function* capped(
  body: AsyncIterable<Buffer> & { destroy(): void },
  maxBytes: number,
  declared: unknown,
): AsyncIterable<Buffer> {
  // A length announced over the cap is refused before a byte of it is read.
  if (Number(declared) > maxBytes) {
    body.destroy()
    throw new BodyTooLarge()
  }
  let total = 0
  for await (const chunk of body) {
    total += chunk.length
    if (total > maxBytes) {
      body.destroy()
      throw new BodyTooLarge()
    }
    yield chunk
  }
}

function decode(bytes: Buffer, contentType: string, type: ResponseType): unknown {
  const isJson = /\bjson\b/i.test(contentType)
  if (type === 'buffer') return bytes
  if (type === 'text') return bytes.toString('utf8')
  if (type === 'json' || (type === 'auto' && isJson)) {
    const text = bytes.toString('utf8')
    if (text.trim() === '') return undefined
    try {
      return JSON.parse(text)
    } catch {
      // Not JSON after all: hand back the text and let the caller refuse the shape.
      return text
    }
  }
  if (/^text\//i.test(contentType) || contentType === '') return bytes.toString('utf8')
  return bytes
}

export function createTransport(opts: TransportOptions): Transport {
  const server = normaliseServer(opts.server)
  const origin = new URL(server).origin
  const basePath = new URL(server).pathname.replace(/\/+$/, '')
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES
  const maxRetryAfterMs = opts.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS
  const backoff = opts.backoff
  const log = opts.logger
  let token = opts.token
  const queue: SharedQueue = acquireQueue(origin, opts.rateLimit)
  // This client's own counters; the queue (and its limit) may be shared with other clients.
  const stats = emptyStats()
  const agent = new Agent({
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connectTimeout: Math.min(timeoutMs, 10_000),
    connect: { rejectUnauthorized: !opts.tlsInsecure },
  })
  /**
   * What an error text must never repeat: the token, and every secret the request body carried
   * (a server that quotes the body it refused would otherwise put a connection's password into
   * the message, the log and --json output).
   */
  function secretsOf(request: HttpRequest): Array<string | undefined> {
    const body = request.body
    const carried =
      body !== null && typeof body === 'object' && !Buffer.isBuffer(body) ? secretFields(body) : []
    // A value of one to three characters (a deployer's mode, a flag) guards nothing, and taking
    // it out of a message would garble every word that holds it.
    return [token, opts.token, ...carried.map((field) => field.value).filter((value) => value.length >= 4)]
  }

  function scrub(text: string, request: HttpRequest): string {
    let clean = text
    for (const secret of secretsOf(request)) if (secret) clean = clean.split(secret).join('***')
    return clean
  }

  function failure(
    request: HttpRequest,
    response: HttpResponse,
    what?: string,
    given?: RemoteErrorCode,
  ): RemoteError {
    const text = typeof response.body === 'string' ? response.body : ''
    if (isForeignErrorPage(response.status, text))
      return notCmsSyncServer(server, {
        method: request.method,
        route: request.path,
        status: response.status,
      })
    const serverMessage = cleanServerMessage(text, secretsOf(request)) || undefined
    const code = given ?? codeForStatus(response.status)
    return remoteError(code, what ?? describe(code, request), {
      method: request.method,
      route: request.path,
      status: response.status,
      itemId: request.itemId,
      serverMessage,
    })
  }

  function transportFailure(request: HttpRequest, error: unknown): RemoteError {
    const code = errorCode(error)
    const data = { method: request.method, route: request.path, itemId: request.itemId }
    if (TIMEOUT_CODES.has(code))
      return remoteError('timeout', `the server did not answer within ${timeoutMs / 1000} s`, data, error)
    // An https:// address on a port that speaks plain HTTP: the TLS hello is answered with an
    // HTTP error page, which OpenSSL reads as a record of an unknown version. No certificate
    // was ever shown, so blaming one sends the user the wrong way.
    if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_HTTP_REQUEST')
      return remoteError(
        'network',
        `${origin} does not speak TLS on that port (${code}): it looks like a plain-http server; use http:// in the server address, or the server's https port`,
        data,
        error,
      )
    if (TLS_CODE.test(code))
      return remoteError(
        'network',
        `the server's TLS certificate was refused (${code}); fix the certificate, or set tls.insecure: true in cms-sync.yaml for this server only`,
        data,
        error,
      )
    const reason = code || (error as Error)?.message || 'unknown error'
    return remoteError('network', `could not reach ${origin} (${reason})`, data, error)
  }

  /** One attempt, inside the queue: send, read the whole body (capped), never leave a body unread. */
  async function attempt(request: HttpRequest, isRetry: boolean): Promise<HttpResponse> {
    return queue.run(async () => {
      request.signal?.throwIfAborted()
      stats.requests++
      if (isRetry) stats.retries++
      const started = Date.now()
      const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.5' }
      let body: string | Buffer | Readable | undefined
      if (request.bodyStream) {
        body = Readable.from(request.bodyStream())
        headers['content-type'] = request.contentType ?? 'application/octet-stream'
        if (request.contentLength !== undefined) headers['content-length'] = String(request.contentLength)
      } else if (request.body !== undefined) {
        if (Buffer.isBuffer(request.body) || typeof request.body === 'string') {
          body = request.body
          headers['content-type'] = request.contentType ?? 'application/octet-stream'
        } else {
          // Without this header the upstream server reads the body as {} and blanks the item (§7.2).
          body = JSON.stringify(request.body)
          headers['content-type'] = 'application/json'
        }
      }
      Object.assign(headers, request.headers)
      if (token && opts.authHeaders) Object.assign(headers, opts.authHeaders(token))
      let res: Dispatcher.ResponseData
      try {
        res = await agent.request({
          origin,
          path: basePath + request.path,
          method: request.method as Dispatcher.HttpMethod,
          headers,
          body,
          ...(request.signal ? { signal: request.signal } : {}),
        })
      } catch (error) {
        stats.byStatusClass.network++
        log?.debug(
          { method: request.method, route: routeOf(request.path), error: errorCode(error) },
          'request failed',
        )
        throw error
      }
      stats.byStatusClass[statusClass(res.statusCode)]++
      if (res.statusCode === 429) stats.rateLimited++
      const contentType = String(res.headers['content-type'] ?? '')
      let bytes: Buffer
      try {
        if (request.sink && res.statusCode >= 200 && res.statusCode < 300) {
          const body = res.body as AsyncIterable<Buffer> & { destroy(): void }
          const max = request.maxBytes
          try {
            await request.sink(max === undefined ? body : capped(body, max, res.headers['content-length']))
          } catch (error) {
            // The sink's own file failed (no space, no such folder): our disk, not the network,
            // so neither "could not reach the server" nor a retry.
            if (typeof (error as { path?: unknown }).path === 'string') throw new LocalSinkError(error)
            throw error
          }
          return { status: res.statusCode, headers: res.headers, body: undefined }
        }
        bytes = await readBody(res.body, request.maxBytes ?? DEFAULT_MAX_BYTES, res.headers['content-length'])
      } catch (error) {
        if (error instanceof BodyTooLarge) {
          throw remoteError(
            'too-large',
            `the server's answer is larger than ${sizeText(request.maxBytes ?? DEFAULT_MAX_BYTES)}, which cms-sync refuses`,
            {
              method: request.method,
              route: request.path,
              status: res.statusCode,
              itemId: request.itemId,
            },
          )
        }
        throw error
      }
      log?.debug(
        {
          method: request.method,
          route: routeOf(request.path),
          status: res.statusCode,
          ms: Date.now() - started,
        },
        'request',
      )
      const ok = res.statusCode >= 200 && res.statusCode < 300
      return {
        status: res.statusCode,
        headers: res.headers,
        // Error bodies are read as text: they carry the server's message, never a secret of ours.
        body: ok
          ? decode(bytes, contentType, request.responseType ?? 'auto')
          : scrub(bytes.toString('utf8'), request),
        ...(ok && request.digest ? { digest: createHash('sha1').update(bytes).digest('hex') } : {}),
        ...(ok && request.keepBytes ? { bytes } : {}),
      }
    })
  }

  async function send(request: HttpRequest): Promise<HttpResponse> {
    const idempotent =
      request.idempotent ??
      (request.method === 'GET' || request.method === 'HEAD' || request.method === 'DELETE')
    for (let retry = 0; ; retry++) {
      let waitMs: number
      try {
        const response = await attempt(request, retry > 0)
        const { status } = response
        // 304 answers a conditional GET (If-None-Match): "what you hold is current", no redirect.
        if (status >= 300 && status < 400 && status !== 304 && !request.redirectIsAnswer) {
          const location = response.headers.location
          const to = typeof location === 'string' ? routeOf(location) : 'elsewhere'
          throw remoteError(
            'rejected',
            `the server redirected to ${to}; cms-sync does not follow redirects for API calls: put the final server URL in cms-sync.yaml`,
            { method: request.method, route: request.path, status, itemId: request.itemId },
          )
        }
        const retryable = status === 429 || status >= 500
        if (!retryable) return response
        // A 5xx may come after the server acted; only a 429 surely means "not done".
        if (status !== 429 && !idempotent)
          throw Object.assign(failure(request, response), { ambiguous: true as const })
        if (retry >= maxRetries)
          throw failure(request, response, `the server kept failing after ${retry + 1} tries`)
        // Retry-After is honoured on 429 and on 503-style answers alike.
        const retryAfter = parseRetryAfterMs(response.headers['retry-after'])
        if (retryAfter !== undefined && retryAfter > maxRetryAfterMs) {
          throw failure(request, response, `the server asked to wait ${Math.ceil(retryAfter / 1000)} s`)
        }
        waitMs = retryAfter ?? backoffDelayMs(retry + 1, backoff)
        // The limit is the server's, not this request's: hold every request to it.
        if (status === 429 || retryAfter !== undefined) stats.heldMs += queue.holdFor(waitMs)
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason
        if (error instanceof RemoteError) throw error
        if (error instanceof LocalSinkError) throw error.local
        // The body's own file failed (gone, unreadable, a folder now): our disk, not the way to
        // the server, so neither "could not reach the server" nor a retry.
        const local = localFileError(error)
        if (local) throw local
        const failureError = transportFailure(request, error)
        if (TLS_CODE.test(errorCode(error))) throw failureError
        const notSent = NOT_SENT_CODES.has(errorCode(error))
        if (!idempotent && !notSent) throw Object.assign(failureError, { ambiguous: true as const })
        if (retry >= maxRetries) throw failureError
        waitMs = backoffDelayMs(retry + 1, backoff)
      }
      log?.debug(
        { method: request.method, route: routeOf(request.path), retry: retry + 1, waitMs },
        'retrying',
      )
      await sleep(waitMs, request.signal)
    }
  }

  return {
    server,
    send,
    failure,
    setToken(next) {
      token = next
    },
    stats: () => structuredClone(stats),
    async close() {
      queue.release()
      await agent.close().catch(() => agent.destroy())
    },
  }
}

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MB` : `${Math.round(bytes / 1024)} KB`
}

function describe(code: string, request: HttpRequest): string {
  const item = request.itemId === undefined ? '' : ` "${request.itemId}"`
  switch (code) {
    case 'unauthorized':
      return 'the server refused the token'
    case 'forbidden':
      return 'the server refused access'
    case 'not-found':
      return `not found${item}`
    case 'too-large':
      return `the server refused${item} as too large`
    case 'rate-limited':
      return 'the server kept answering "too many requests"'
    case 'server':
      return `the server failed${item}`
    default:
      return `the server refused${item}`
  }
}
