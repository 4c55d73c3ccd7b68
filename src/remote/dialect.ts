// What differs between the `spec` and `upstream` dialects (docs/api-dialects.md), in one place:
// routes, how the token is presented, how an error answer is classified, and how a missing
// item looks. The client asks this module; it never tests the dialect name itself for these.

import { cleanServerMessage, codeForStatus, isForeignErrorPage, type RemoteErrorCode } from './errors.js'
import type { Transport } from './http.js'

export type Dialect = 'spec' | 'upstream'
export type RemoteKind = 'schema' | 'content' | 'form' | 'connection'

/** The URL segment of each kind under /api/:project/:environment. */
export const SEGMENT: Record<RemoteKind, string> = {
  schema: 'schemas',
  content: 'content',
  form: 'forms',
  connection: 'connections',
}

export { NATIVE_SCHEMA_IDS } from '../workspace/kinds.js'

/**
 * Literal sub-routes registered before `/:id` (§1.1): an item with such an id could be read but
 * never written or deleted, so cms-sync refuses them as ids.
 */
export const ROUTE_WORDS: Record<RemoteKind, ReadonlySet<string>> = {
  schema: new Set(['new', 'import', 'pull', 'push']),
  content: new Set(['new', 'publish', 'unpublish', 'example', 'insert', 'pull', 'push', 'heartbeat']),
  form: new Set(['new', 'clear', 'pull', 'push']),
  connection: new Set(['new', 'deployers', 'processors', 'pull', 'push']),
}

/**
 * Headers that carry the token. The cookie works on every route of both dialects (and is the
 * only thing upstream reads on /api/user); spec also takes the Bearer header.
 */
export function authHeaders(dialect: Dialect | undefined, token: string): Record<string, string> {
  const headers: Record<string, string> = { cookie: `token=${token}` }
  if (dialect !== 'upstream') headers.authorization = `Bearer ${token}`
  return headers
}

export const TARGET_NOT_FOUND = /(Project "[^"]*" could not be found|Environment "[^"]*" was not found)/
const ROUTE_MISSING = /\bCannot (GET|POST|PUT|DELETE|PATCH|HEAD) \//
const ITEM_NOT_FOUND = /\b(was not found|could not be found|not found)\b/i
/** What upstream says when a write needs the user and the token was missing or bad (§2.3). */
const NULL_USER = /Cannot read propert(y|ies) .*null|of null/
const NEEDS_ADMIN = /You need to be admin|You need the "[^"]*" scope/

/** The error code of a non-2xx answer, with each dialect's quirks taken into account. `text` is the cleaned message. */
export function classify(dialect: Dialect, status: number, text: string): RemoteErrorCode {
  if (TARGET_NOT_FOUND.test(text)) return 'not-found'
  if (dialect === 'upstream') {
    // Upstream answers 404 for nearly every resource error, validation included (§1.3).
    if (status === 404 && NULL_USER.test(text)) return 'unauthorized'
    if (status === 404 && (ROUTE_MISSING.test(text) || ITEM_NOT_FOUND.test(text))) return 'not-found'
    if (status === 404) return 'rejected'
    if (status === 400 && NEEDS_ADMIN.test(text)) return 'forbidden'
  }
  return codeForStatus(status)
}

/**
 * Upstream's media cache folder (`storage/<project>/cache`) is made by a project's first
 * download; until then the cache step of an upload or a delete fails with ENOENT naming it
 * (upstream-server.md 8.4): an upload answers 500 after it stored the file, a delete 404
 * before it deleted anything.
 */
export function isMissingMediaCache(dialect: Dialect, text: string): boolean {
  return dialect === 'upstream' && /\bENOENT\b.*[/\\]cache\b/.test(text)
}

/**
 * Concurrent first downloads of an upstream project race on making that folder and the losers
 * answer 404 EEXIST: a transient failure, gone on the next try.
 */
export function isMediaCacheRace(dialect: Dialect, status: number, text: string): boolean {
  return dialect === 'upstream' && status === 404 && /\bEEXIST\b/.test(text)
}

/** Whether an answer means "this item does not exist" (and not "no such project" or "no such route"). */
export function isItemMissing(dialect: Dialect, status: number, text: string): boolean {
  if (status !== 404 || TARGET_NOT_FOUND.test(text) || ROUTE_MISSING.test(text)) return false
  return dialect === 'spec' || ITEM_NOT_FOUND.test(text)
}

export function projectPath(project: string, environment: string): string {
  return `/api/${encodeURIComponent(project)}/${encodeURIComponent(environment)}`
}

/**
 * Tells the dialects apart with one request: spec serves the schema list at `P/schema` (200,
 * or 401 without a good token), upstream has no such route (Express 404 `Cannot GET`) and
 * answers 400 for an unknown project where spec answers 404.
 */
export async function detectDialect(
  transport: Transport,
  project: string,
  environment: string,
): Promise<Dialect> {
  const request = {
    method: 'GET',
    path: `${projectPath(project, environment)}/schema`,
    responseType: 'text' as const,
  }
  const res = await transport.send(request)
  const text = typeof res.body === 'string' ? cleanServerMessage(res.body) : ''
  if (res.status === 200 || res.status === 401 || res.status === 403) return 'spec'
  if (res.status === 404 && TARGET_NOT_FOUND.test(text)) return 'spec'
  // Another web server's error page is no dialect at all.
  if (typeof res.body === 'string' && isForeignErrorPage(res.status, res.body))
    throw transport.failure(request, res)
  if (res.status === 404 || res.status === 400) return 'upstream'
  throw transport.failure(request, res, 'could not tell which API dialect the server speaks')
}
