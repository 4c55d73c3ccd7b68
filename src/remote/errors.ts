// Every failure that leaves the remote client is one RemoteError with a `code`. Callers
// switch on the code (the engine keeps going on `rejected`, stops on `unauthorized`); users
// read the message, which always says what to do next. The token is never part of any of
// it: `route` is the path without its query, and server text is scrubbed of the token.

import { CliError, ExitCode } from '../errors/exit-codes.js'

export type RemoteErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'not-found'
  | 'rejected'
  | 'too-large'
  | 'network'
  | 'timeout'
  | 'server'
  | 'rate-limited'
  | 'conflict'
  | 'listing'

export interface RemoteErrorData {
  method: string
  /** The request path without its query string (a query may carry a token). */
  route: string
  status?: number | undefined
  itemId?: string | undefined
  /** The server's own message, trimmed. */
  serverMessage?: string | undefined
}

const SERVER_MESSAGE_MAX = 200

/** Trims a server message to one readable line and removes any secret it may echo back. */
export function cleanServerMessage(text: string, secrets: Array<string | undefined> = []): string {
  let clean = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  for (const secret of secrets) if (secret) clean = clean.split(secret).join('***')
  return clean.length > SERVER_MESSAGE_MAX ? `${clean.slice(0, SERVER_MESSAGE_MAX - 1)}…` : clean
}

/** The path of a URL or path, without query or fragment: the only form that goes into errors and logs. */
export function routeOf(pathOrUrl: string): string {
  const cut = pathOrUrl.search(/[?#]/)
  return cut === -1 ? pathOrUrl : pathOrUrl.slice(0, cut)
}

export class RemoteError extends CliError {
  readonly method: string
  readonly route: string
  readonly status: number | undefined
  readonly itemId: string | undefined
  readonly serverMessage: string | undefined
  /** What to do next, when the message ends with it ("<what happened>; <hint>"). */
  readonly hint: string | undefined

  constructor(
    readonly code: RemoteErrorCode,
    message: string,
    data: RemoteErrorData,
    options?: { cause?: unknown; exitCode?: ExitCode; hint?: string; lead?: string },
  ) {
    super(message, options?.exitCode ?? exitCodeFor(code), options?.lead)
    // The class name (UnauthorizedError, ...) without each subclass repeating it.
    this.name = new.target.name
    if (options?.cause !== undefined) this.cause = options.cause
    this.method = data.method
    this.route = routeOf(data.route)
    this.status = data.status
    this.itemId = data.itemId
    this.serverMessage = data.serverMessage
    this.hint = options?.hint
  }

  /** For `--json` output and logs: no stack, no cause chain, no token. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      method: this.method,
      route: this.route,
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.itemId === undefined ? {} : { itemId: this.itemId }),
      ...(this.serverMessage === undefined ? {} : { serverMessage: this.serverMessage }),
    }
  }
}

export class UnauthorizedError extends RemoteError {}
export class ForbiddenError extends RemoteError {}
export class NotFoundError extends RemoteError {}
export class RejectedError extends RemoteError {}
export class TooLargeError extends RemoteError {}
export class NetworkError extends RemoteError {}
export class TimeoutError extends RemoteError {}
export class ServerError extends RemoteError {}
export class RateLimitedError extends RemoteError {}
/** The item changed on the server while we wrote it; nothing was overwritten. */
export class RemoteConflictError extends RemoteError {}
/** A listing failed or had the wrong shape: a safety stop, it must never be read as "empty". */
export class ListingError extends RemoteError {}

const CLASS_OF: Record<RemoteErrorCode, typeof RemoteError> = {
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  'not-found': NotFoundError,
  rejected: RejectedError,
  'too-large': TooLargeError,
  network: NetworkError,
  timeout: TimeoutError,
  server: ServerError,
  'rate-limited': RateLimitedError,
  conflict: RemoteConflictError,
  listing: ListingError,
}

const NEXT_STEP: Record<RemoteErrorCode, string> = {
  unauthorized: 'run `cms-sync login` or set CMS_SYNC_TOKEN',
  forbidden: 'this user lacks the rights for it; ask an admin or log in as another user',
  'not-found': 'check the server URL, project and environment in cms-sync.yaml, and the id',
  rejected: 'fix the item and try again',
  'too-large': 'make the item smaller, or raise the server limit',
  network: 'check that the server is running and reachable, then try again',
  timeout: 'the server is slow or stuck; try again later',
  server: 'the server failed; try again later and check its logs',
  'rate-limited': 'the server is busy; lower rateLimit.requestsPerSecond in cms-sync.yaml or try later',
  conflict: 'the item changed on the server meanwhile; run `cms-sync status` and sync again',
  listing: 'nothing was changed; check the server and try again',
}

/**
 * What to do after a listing failed for this cause. A listing names no item, so the advice that
 * speaks of one ("fix the item", "and the id") gives way to the listing's own; the rest
 * (log in, rights, the network, a busy server) stands as it is.
 */
export function listingNextStep(code: RemoteErrorCode): string {
  if (code === 'rejected') return 'check the server and try again'
  if (code === 'not-found')
    return 'check the server URL, project and environment in cms-sync.yaml, and the server, then try again'
  return NEXT_STEP[code]
}

/** The error's message without the next step remoteError appended to it. */
export function withoutNextStep(error: RemoteError): string {
  return error.hint === undefined ? error.message : error.message.slice(0, -`; ${error.hint}`.length)
}

/** The same error with another next step: where the code's own would send the user the wrong way. */
export function withNextStep(error: RemoteError, hint: string): RemoteError {
  if (error.hint === undefined) return error
  const Class = CLASS_OF[error.code]
  const data = {
    method: error.method,
    route: error.route,
    status: error.status,
    itemId: error.itemId,
    serverMessage: error.serverMessage,
  }
  const options = { cause: error.cause, exitCode: error.exitCode, hint }
  return new Class(error.code, `${withoutNextStep(error)}; ${hint}`, data, options)
}

/**
 * Builds the error for `code`: "<what happened> (<METHOD> <route> -> <status>: <server text>);
 * <what to do next>".
 */
export function remoteError(
  code: RemoteErrorCode,
  what: string,
  data: RemoteErrorData,
  cause?: unknown,
): RemoteError {
  const Class = CLASS_OF[code]
  const where = `${data.method} ${routeOf(data.route)}${data.status === undefined ? '' : ` -> ${data.status}`}`
  const server = data.serverMessage ? `: ${data.serverMessage}` : ''
  const message = `${what} (${where}${server}); ${NEXT_STEP[code]}`
  return new Class(code, message, data, { cause, exitCode: exitCodeFor(code), hint: NEXT_STEP[code] })
}

/**
 * Some other web server on that address: an HTML error page where a cms-sync server answers
 * with text or JSON. Said plainly, since the raw page text ("404 Not Found Not Found") and the
 * dialect guesses built on it only mislead.
 */
export function notCmsSyncServer(server: string, data: RemoteErrorData): RemoteError {
  return new NotFoundError(
    'not-found',
    `${server} is not a cms-sync server (HTML ${data.status} at ${routeOf(data.route)}); check the server URL and its port`,
    data,
    { exitCode: ExitCode.failed },
  )
}

/**
 * An answer that no cms-sync server (spec or upstream) gives: an HTML document for an error,
 * other than Express's own "Cannot GET /route" page, which is how upstream says a route is missing.
 */
export function isForeignErrorPage(status: number, text: string): boolean {
  return (
    status >= 400 &&
    /^\s*<(!doctype html|html)\b/i.test(text) &&
    !/\bCannot (GET|POST|PUT|DELETE|PATCH|HEAD) \//.test(text)
  )
}

/**
 * design.md's exit codes: a listing that failed is a safety stop (4, nothing was changed); a
 * missing or refused token is the user's configuration to fix (`cms-sync login`), never a
 * retry's: 2, like every other usage or config error; anything else failed (1).
 */
export function exitCodeFor(code: RemoteErrorCode): ExitCode {
  if (code === 'listing') return ExitCode.safetyStop
  if (code === 'unauthorized') return ExitCode.usage
  return ExitCode.failed
}

/** The code for an HTTP status that is not a success. */
export function codeForStatus(status: number): RemoteErrorCode {
  if (status === 401) return 'unauthorized'
  if (status === 403) return 'forbidden'
  if (status === 404) return 'not-found'
  if (status === 413) return 'too-large'
  if (status === 429) return 'rate-limited'
  if (status >= 500) return 'server'
  return 'rejected'
}
