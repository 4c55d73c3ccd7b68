// What one request came to, classified once (style.md §6, after Shopify cli-kit's api.ts): the
// transport's retry loop and every caller switch on `kind`; none of them reads a status or a
// server message to decide what happened. The dialect's quirks (upstream answers 404 for a
// refused token, for a validation error, for a missing item) are the capability row's.

import type { Capabilities } from './capabilities.js'
import { cleanServerMessage, codeForStatus, type RemoteError, type RemoteErrorCode } from './errors.js'
import type { HttpResponse } from './http-types.js'

/** Why a request is worth trying again: the server was busy, failed, or could not be reached. */
export type RetryCause = '429' | '5xx' | 'network'

/** What every answer that is not a success carries. */
interface Failed {
  /** The failure in the transport's words (the code is the dialect's reading of the answer). */
  error: RemoteError
  /** The same failure, said as `what` failed ("could not read content \"home\""). */
  fail(what?: string): RemoteError
}

export type Answer =
  | { kind: 'ok'; response: HttpResponse }
  /**
   * A conditional GET answered "what you hold is current" (If-None-Match); a failure to a caller
   * that held nothing.
   */
  | ({ kind: 'not-modified'; response: HttpResponse } & Failed)
  /**
   * Worth trying again after `afterMs`. `told` when the server said how long (Retry-After): then
   * every request to it waits. Returned by `send()` only when the retries are spent.
   */
  | ({ kind: 'retry'; afterMs: number; told: boolean; cause: RetryCause; response?: HttpResponse } & Failed)
  | ({ kind: 'unauthorized'; response: HttpResponse } & Failed)
  /** `item`: the answer says this item does not exist (not the project, not the route). */
  | ({ kind: 'not-found'; item: boolean; response: HttpResponse } & Failed)
  /** Refused for good (4xx): `message` is the server's, cleaned. */
  | ({ kind: 'rejected'; status: number; message: string; response: HttpResponse } & Failed)
  /**
   * The server may or may not have acted (a 5xx or a lost connection after a request that is
   * not safe to repeat): re-read before writing again.
   */
  | ({ kind: 'ambiguous'; response?: HttpResponse } & Failed)

export type FailedAnswer = Exclude<Answer, { kind: 'ok' }>

/** How to read one response: whether the request may be repeated, and whose dialect answered. */
export interface AnswerContext {
  idempotent: boolean
  /** Undefined before the dialect is known (its detection): plain HTTP status codes then. */
  capabilities: Capabilities | undefined
  /** The backoff before the next try, when the server does not say. */
  backoffMs: number
  /** Retry-After, in ms from now; undefined when absent or unreadable. */
  retryAfterMs: number | undefined
  /** The RemoteError for this response (`what` says what failed; `code` the dialect's reading). */
  failure(what?: string, code?: RemoteErrorCode): RemoteError
}

function failed(error: RemoteError, fail: (what?: string) => RemoteError = () => error): Failed {
  return { error, fail }
}

/** A RemoteError an ambiguous failure throws where a caller is not switching on answers. */
export function markAmbiguous(error: RemoteError): RemoteError {
  return Object.assign(error, { ambiguous: true as const })
}

/** The answer a response is. Redirects the caller did not ask for never get here. */
export function classifyResponse(response: HttpResponse, ctx: AnswerContext): Answer {
  const { status } = response
  if (status === 304) {
    // The usual answer of a quiet poll, and almost never a failure: its error (an Error, with its
    // stack) is made only when a caller that held nothing asks for it.
    let error: RemoteError | undefined
    const fail = () => (error ??= ctx.failure())
    return {
      kind: 'not-modified',
      response,
      get error() {
        return fail()
      },
      fail,
    }
  }
  if (status < 400) return { kind: 'ok', response }
  if (status === 429 || status >= 500) {
    // A 5xx may come after the server acted; only a 429 surely means "not done".
    if (status !== 429 && !ctx.idempotent)
      return { kind: 'ambiguous', response, ...failed(markAmbiguous(ctx.failure())) }
    const told = ctx.retryAfterMs !== undefined
    const cause = status === 429 ? '429' : '5xx'
    return {
      kind: 'retry',
      cause,
      afterMs: ctx.retryAfterMs ?? ctx.backoffMs,
      told,
      response,
      ...failed(ctx.failure()),
    }
  }
  const text = typeof response.body === 'string' ? cleanServerMessage(response.body) : ''
  const code = ctx.capabilities?.errors.classify(status, text) ?? codeForStatus(status)
  const fail = (what?: string) => ctx.failure(what, code)
  if (ctx.capabilities?.errors.itemMissing(status, text))
    return { kind: 'not-found', item: true, response, ...failed(fail(), fail) }
  if (code === 'unauthorized') return { kind: 'unauthorized', response, ...failed(fail(), fail) }
  if (code === 'not-found') return { kind: 'not-found', item: false, response, ...failed(fail(), fail) }
  return { kind: 'rejected', status, message: text, response, ...failed(fail(), fail) }
}

/** A request that got no answer (refused, timed out, cut off): retried unless it may have landed. */
export function classifyUnanswered(
  error: RemoteError,
  notSent: boolean,
  idempotent: boolean,
  backoffMs: number,
): Answer {
  if (!idempotent && !notSent) return { kind: 'ambiguous', ...failed(markAmbiguous(error)) }
  return { kind: 'retry', cause: 'network', afterMs: backoffMs, told: false, ...failed(error) }
}

/** The answer as its spent retries leave it: the failure says so. */
export function gaveUp(answer: Extract<Answer, { kind: 'retry' }>, error: RemoteError): Answer {
  return { ...answer, ...failed(error) }
}

/**
 * The response of any answer the server gave (2xx, 304, 4xx, a redirect that is the answer);
 * a request that kept failing or may have landed is thrown as its RemoteError.
 */
export function responseOf(answer: Answer): HttpResponse {
  if (answer.kind === 'retry' || answer.kind === 'ambiguous') throw answer.error
  return answer.response
}

/** The server's own words in an answer, as it sent them ('' when it sent none). */
export function serverText(answer: Answer): string {
  const body = answer.response?.body
  return typeof body === 'string' ? body : ''
}
