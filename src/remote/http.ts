// The HTTP layer under the client: one undici Pool for the server's origin (TLS verified unless
// the config opts out),
// every attempt through the shared rate-limited queue, a timeout on every request, capped
// response bodies, no redirects, and retries that never repeat a request the server may have
// applied. It knows nothing of resources: it moves requests and classifies failures.

import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { Logger } from 'pino'
import type { Dispatcher } from 'undici'
import { Pool } from 'undici'
import { findCause } from '../errors/find-cause.js'
import { secretFields } from '../workspace/connection-secrets.js'
import { type Answer, classifyResponse, classifyUnanswered, gaveUp } from './answer.js'
import type { Capabilities } from './capabilities.js'
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
import type { HttpRequest, HttpResponse, ResponseType } from './http-types.js'
import {
  acquireQueue,
  emptyStats,
  type RateLimit,
  type RequestStats,
  type SharedQueue,
  type StatusClass,
} from './queue.js'
import { backoffDelayMs, parseRetryAfterMs, sleep } from './retry.js'

export type { HttpRequest, HttpResponse, ResponseType } from './http-types.js'

export interface TransportOptions {
  server: string
  rateLimit: RateLimit
  token?: string | undefined
  /** Adds the token to a request in the dialect's way; without it the request is anonymous. */
  authHeaders?: (token: string) => Record<string, string>
  /** The dialect's row, once known: how its error answers read (answer.ts). */
  capabilities?: () => Capabilities | undefined
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
  /**
   * The request, retried while its answer says `retry` (at most maxRetries times, never one
   * that may have landed), and what it came to. Thrown instead: an abort (its reason), a
   * refused certificate, a redirect, a body over its cap, a failure of the caller's own file.
   */
  send(request: HttpRequest): Promise<Answer>
  /** Turns a final non-2xx response into the RemoteError for it. */
  failure(request: HttpRequest, response: HttpResponse, what?: string, code?: RemoteErrorCode): RemoteError
  /** Uses this token from the next request on (a daemon that found a new login). */
  setToken(token: string | undefined): void
  stats(): RequestStats
  close(): Promise<void>
}

/** An error the caller may settle by re-reading: the server may or may not have applied the request. */
export type AmbiguousError = RemoteError & { ambiguous: true }

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

/** A body as the request asked for it: JSON when it says so, else text or bytes. */
export function decode(bytes: Buffer, contentType: string, type: ResponseType): unknown {
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
  return new HttpTransport(opts)
}

/** The failure that stops the retries at once: the server's certificate was refused. */
function isTlsRefusal(error: unknown): boolean {
  return TLS_CODE.test(errorCode(error))
}

class HttpTransport implements Transport {
  readonly server: string
  private readonly origin: string
  private readonly basePath: string
  private readonly timeoutMs: number
  private readonly maxRetries: number
  private readonly maxRetryAfterMs: number
  private token: string | undefined
  private readonly queue: SharedQueue
  /** This client's own counters; the queue (and its limit) may be shared with other clients. */
  private readonly counters = emptyStats()
  /**
   * A Pool for the one origin, not an Agent: an Agent drops its pool for an origin once every
   * connection to it closed, so a daemon polling less often than the server keeps idle
   * connections open (10 s polls, Node's 5 s keep-alive) built a pool, its connector and a
   * client again for every poll. A Pool keeps its clients and only opens a socket again.
   */
  private readonly agent: Pool

  constructor(private readonly opts: TransportOptions) {
    this.server = normaliseServer(opts.server)
    this.origin = new URL(this.server).origin
    this.basePath = new URL(this.server).pathname.replace(/\/+$/, '')
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
    this.maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS
    this.token = opts.token
    this.queue = acquireQueue(this.origin, opts.rateLimit)
    this.agent = new Pool(this.origin, {
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connectTimeout: Math.min(this.timeoutMs, 10_000),
      connect: { rejectUnauthorized: !opts.tlsInsecure },
    })
  }

  /**
   * What an error text must never repeat: the token, and every secret the request body carried
   * (a server that quotes the body it refused would otherwise put a connection's password into
   * the message, the log and --json output).
   */
  private secretsOf(request: HttpRequest): Array<string | undefined> {
    const body = request.body
    const carried =
      body !== null && typeof body === 'object' && !Buffer.isBuffer(body) ? secretFields(body) : []
    // A value of one to three characters (a deployer's mode, a flag) guards nothing, and taking
    // it out of a message would garble every word that holds it.
    return [
      this.token,
      this.opts.token,
      ...carried.map((field) => field.value).filter((value) => value.length >= 4),
    ]
  }

  private scrub(text: string, request: HttpRequest): string {
    let clean = text
    for (const secret of this.secretsOf(request)) if (secret) clean = clean.split(secret).join('***')
    return clean
  }

  failure(request: HttpRequest, response: HttpResponse, what?: string, given?: RemoteErrorCode): RemoteError {
    const text = typeof response.body === 'string' ? response.body : ''
    if (isForeignErrorPage(response.status, text))
      return notCmsSyncServer(this.server, {
        method: request.method,
        route: request.path,
        status: response.status,
      })
    const serverMessage = cleanServerMessage(text, this.secretsOf(request)) || undefined
    const code = given ?? codeForStatus(response.status)
    return remoteError(code, what ?? describe(code, request), {
      method: request.method,
      route: request.path,
      status: response.status,
      itemId: request.itemId,
      serverMessage,
    })
  }

  private transportFailure(request: HttpRequest, error: unknown): RemoteError {
    const code = errorCode(error)
    const data = { method: request.method, route: request.path, itemId: request.itemId }
    if (TIMEOUT_CODES.has(code))
      return remoteError(
        'timeout',
        `the server did not answer within ${this.timeoutMs / 1000} s`,
        data,
        error,
      )
    // An https:// address on a port that speaks plain HTTP: the TLS hello is answered with an
    // HTTP error page, which OpenSSL reads as a record of an unknown version. No certificate
    // was ever shown, so blaming one sends the user the wrong way.
    if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_HTTP_REQUEST')
      return remoteError(
        'network',
        `${this.origin} does not speak TLS on that port (${code}): it looks like a plain-http server; use http:// in the server address, or the server's https port`,
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
    return remoteError('network', `could not reach ${this.origin} (${reason})`, data, error)
  }

  /** The headers and body of one attempt; a streamed body is made afresh for each. */
  private outgoing(request: HttpRequest): {
    headers: Record<string, string>
    body?: string | Buffer | Readable
  } {
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
    if (this.token && this.opts.authHeaders) Object.assign(headers, this.opts.authHeaders(this.token))
    return { headers, ...(body === undefined ? {} : { body }) }
  }

  /** One attempt, inside the queue: send, read the whole body (capped), never leave a body unread. */
  private attempt(request: HttpRequest, isRetry: boolean): Promise<HttpResponse> {
    return this.queue.run(async () => {
      request.signal?.throwIfAborted()
      this.counters.requests++
      if (isRetry) this.counters.retries++
      const started = Date.now()
      const { headers, body } = this.outgoing(request)
      let res: Dispatcher.ResponseData
      try {
        res = await this.agent.request({
          path: this.basePath + request.path,
          method: request.method as Dispatcher.HttpMethod,
          headers,
          body,
          ...(request.signal ? { signal: request.signal } : {}),
        })
      } catch (error) {
        this.counters.byStatusClass.network++
        this.opts.logger?.debug(
          { method: request.method, route: routeOf(request.path), error: errorCode(error) },
          'request failed',
        )
        throw error
      }
      this.counters.byStatusClass[statusClass(res.statusCode)]++
      if (res.statusCode === 429) this.counters.rateLimited++
      const response = await this.received(request, res)
      // Checked first: a quiet poll's requests would build the line's fields for nothing.
      if (this.opts.logger?.isLevelEnabled('debug'))
        this.opts.logger.debug(
          {
            method: request.method,
            route: routeOf(request.path),
            status: res.statusCode,
            ms: Date.now() - started,
          },
          'request',
        )
      return response
    })
  }

  /** The response as the caller asked for it: streamed into its sink, or read (capped) and decoded. */
  private async received(request: HttpRequest, res: Dispatcher.ResponseData): Promise<HttpResponse> {
    const ok = res.statusCode >= 200 && res.statusCode < 300
    let bytes: Buffer
    try {
      if (request.sink && ok) {
        await this.intoSink(request, request.sink, res)
        return { status: res.statusCode, headers: res.headers, body: undefined }
      }
      bytes = await readBody(res.body, request.maxBytes ?? DEFAULT_MAX_BYTES, res.headers['content-length'])
    } catch (error) {
      if (!(error instanceof BodyTooLarge)) throw error
      throw remoteError(
        'too-large',
        `the server's answer is larger than ${sizeText(request.maxBytes ?? DEFAULT_MAX_BYTES)}, which cms-sync refuses`,
        { method: request.method, route: request.path, status: res.statusCode, itemId: request.itemId },
      )
    }
    const contentType = String(res.headers['content-type'] ?? '')
    return {
      status: res.statusCode,
      headers: res.headers,
      // Error bodies are read as text: they carry the server's message, never a secret of ours.
      body: ok
        ? decode(bytes, contentType, request.responseType ?? 'auto')
        : this.scrub(bytes.toString('utf8'), request),
      ...(ok && request.digest ? { digest: createHash('sha1').update(bytes).digest('hex') } : {}),
      ...(ok && request.keepBytes ? { bytes } : {}),
    }
  }

  private async intoSink(
    request: HttpRequest,
    sink: NonNullable<HttpRequest['sink']>,
    res: Dispatcher.ResponseData,
  ): Promise<void> {
    const body = res.body as AsyncIterable<Buffer> & { destroy(): void }
    const max = request.maxBytes
    try {
      await sink(max === undefined ? body : capped(body, max, res.headers['content-length']))
    } catch (error) {
      // The sink's own file failed (no space, no such folder): our disk, not the network,
      // so neither "could not reach the server" nor a retry.
      if (typeof (error as { path?: unknown }).path === 'string') throw new LocalSinkError(error)
      throw error
    }
  }

  /** One attempt, classified: every answer and every failure to get one is an Answer. */
  private async answer(request: HttpRequest, retry: number, idempotent: boolean): Promise<Answer> {
    const backoffMs = backoffDelayMs(retry + 1, this.opts.backoff)
    try {
      const response = await this.attempt(request, retry > 0)
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
      return classifyResponse(response, {
        idempotent,
        capabilities: this.opts.capabilities?.(),
        backoffMs,
        retryAfterMs: parseRetryAfterMs(response.headers['retry-after']),
        failure: (what, code) => this.failure(request, response, what, code),
      })
    } catch (error) {
      if (request.signal?.aborted) throw request.signal.reason
      if (error instanceof RemoteError) throw error
      if (error instanceof LocalSinkError) throw error.local
      // The body's own file failed (gone, unreadable, a folder now): our disk, not the way to
      // the server, so neither "could not reach the server" nor a retry.
      const local = localFileError(error)
      if (local) throw local
      const failure = this.transportFailure(request, error)
      if (isTlsRefusal(error)) throw failure
      return classifyUnanswered(failure, NOT_SENT_CODES.has(errorCode(error)), idempotent, backoffMs)
    }
  }

  async send(request: HttpRequest): Promise<Answer> {
    const idempotent =
      request.idempotent ??
      (request.method === 'GET' || request.method === 'HEAD' || request.method === 'DELETE')
    for (let retry = 0; ; retry++) {
      const answer = await this.answer(request, retry, idempotent)
      if (answer.kind !== 'retry') return answer
      const { response } = answer
      if (retry >= this.maxRetries)
        return response
          ? gaveUp(
              answer,
              this.failure(request, response, `the server kept failing after ${retry + 1} tries`),
            )
          : answer
      // Retry-After is honoured on 429 and on 503-style answers alike.
      if (response && answer.told && answer.afterMs > this.maxRetryAfterMs)
        return gaveUp(
          answer,
          this.failure(request, response, `the server asked to wait ${Math.ceil(answer.afterMs / 1000)} s`),
        )
      // The limit is the server's, not this request's: hold every request to it.
      if (answer.cause === '429' || answer.told) this.counters.heldMs += this.queue.holdFor(answer.afterMs)
      this.opts.logger?.debug(
        { method: request.method, route: routeOf(request.path), retry: retry + 1, waitMs: answer.afterMs },
        'retrying',
      )
      await sleep(answer.afterMs, request.signal)
    }
  }

  setToken(next: string | undefined): void {
    this.token = next
  }

  stats(): RequestStats {
    return structuredClone(this.counters)
  }

  async close(): Promise<void> {
    this.queue.release()
    await this.agent.close().catch(() => this.agent.destroy())
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
