// The API's routes as both dialects share them, and how the client tells the dialects apart.
// What differs between them is capabilities.ts.

import { responseOf } from './answer.js'
import { type Dialect, TARGET_NOT_FOUND } from './capabilities.js'
import { cleanServerMessage, isForeignErrorPage } from './errors.js'
import type { Transport } from './http.js'

export type { Dialect }
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
  // Detection reads the statuses themselves: they are what tells the dialects apart.
  const res = responseOf(await transport.send(request))
  const text = typeof res.body === 'string' ? cleanServerMessage(res.body) : ''
  if (res.status === 200 || res.status === 401 || res.status === 403) return 'spec'
  if (res.status === 404 && TARGET_NOT_FOUND.test(text)) return 'spec'
  // Another web server's error page is no dialect at all.
  if (typeof res.body === 'string' && isForeignErrorPage(res.status, res.body))
    throw transport.failure(request, res)
  if (res.status === 404 || res.status === 400) return 'upstream'
  throw transport.failure(request, res, 'could not tell which API dialect the server speaks')
}
