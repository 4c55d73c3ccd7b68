// What a route handler gets: the parsed request, the caller, the resolved project and
// environment, and body readers that apply the dialect's rules for bad bodies.

import type { IncomingMessage } from 'node:http'
import { nestsDeeperThan } from '../workspace/json-depth.js'
import type { User, Users } from './auth.js'
import type { Dialect } from './dialect.js'
import { isObj, type Obj } from './entities.js'
import { HttpError, type Reply, readBody, text } from './http.js'
import type { EnvKind, Store } from './store.js'

/** The deepest request body taken (far beyond any item; the walks after the parse recurse). */
const MAX_BODY_DEPTH = 1000

export type Logger = { info(msg: string): void; warn(msg: string): void }

export type Core = {
  store: Store
  users: Users
  d: Dialect
  now(): number
  log: Logger
  maxBodyBytes: number
  /** Where the emulator is reachable, for self-references such as sync login. */
  url(): string
  /** Marks the self-test's own requests, which faults and the rate limit leave alone. */
  selfTestKey: string
  /** The folder the filesystem deployer writes published content under (routes/publishing.ts). */
  deployRoot: string
  /** Runs before each routed request: the schedule's due tasks (routes/publishing.ts). */
  beforeRequest?: () => Promise<void>
  stats: EmulatorStats
}

/** What the emulator did, for tests and the bench (the emulator is a test double). */
export type EmulatorStats = {
  /** Listing bodies built (a listing route's handler run); a versioned 304 builds none. */
  listingsBuilt: number
}

export type Ctx = {
  core: Core
  d: Dialect
  req: IncomingMessage
  url: URL
  params: Record<string, string>
  user: User | undefined
  token: string | undefined
  project: string
  environment: string
  query(name: string): string | undefined
  /** The JSON body as an object (or array when allowed), per the dialect's rules. */
  body(options?: { allowArray?: boolean; optional?: boolean }): Promise<unknown>
  raw(): Promise<Buffer>
  text(body: string, status?: number): Reply
  /** The caller's id, for handlers that record who wrote (upstream fails without one). */
  userId(): string
}

export type RouteOptions = {
  /** none: anyone; user: a valid token (spec) ; admin: an admin's token. */
  auth: 'none' | 'user' | 'admin'
  /** Upstream reads only the cookie on these routes (§2.3). */
  cookieOnly?: boolean
  /**
   * A listing, and the kinds of its environment it reads: its ETag can be their versions
   * (Dialect.listingEtag) instead of a hash of the body.
   */
  listing?: EnvKind[]
}

export type Handler = (ctx: Ctx) => Promise<Reply> | Reply
export type Route = (method: string, pattern: string, options: RouteOptions, handler: Handler) => void

function isJsonType(req: IncomingMessage): boolean {
  return /^application\/(.+\+)?json\b/i.test(req.headers['content-type'] ?? '')
}

export function makeCtx(
  core: Core,
  req: IncomingMessage,
  url: URL,
  params: Record<string, string>,
  user: User | undefined,
  token: string | undefined,
): Ctx {
  const d = core.d
  let raw: Promise<Buffer> | undefined
  const readRaw = () => {
    raw ??= readBody(req, core.maxBodyBytes)
    return raw
  }
  return {
    core,
    d,
    req,
    url,
    params,
    user,
    token,
    project: params.project ?? '',
    environment: params.environment ?? '',
    query: (name) => url.searchParams.get(name) ?? undefined,
    raw: readRaw,
    text: (body, status = 200) => text(body, status, d.textType),
    userId() {
      if (!user) throw d.auth.noUser()
      return user.id
    },
    async body(options = {}) {
      const bytes = await readRaw()
      if (!isJsonType(req)) {
        if (!d.body.requireJsonType || (options.optional && bytes.length === 0)) return {}
        throw new HttpError(400, 'Expected a JSON body sent with Content-Type: application/json')
      }
      if (bytes.length === 0) {
        if (options.optional || !d.body.requireJsonType) return {}
        throw new HttpError(400, 'Expected a JSON body, got an empty one')
      }
      let value: unknown
      try {
        value = JSON.parse(bytes.toString('utf8'))
      } catch (error) {
        throw new HttpError(400, `The body is not valid JSON: ${(error as Error).message}`)
      }
      // Everything after the parse (validation, copies, the store) walks the value recursively: a
      // body nesting thousands of levels would overflow the stack there. No item nests like that.
      if (nestsDeeperThan(value, MAX_BODY_DEPTH))
        throw new HttpError(400, `The body nests deeper than ${MAX_BODY_DEPTH} levels of objects and arrays`)
      // Express's strict parser refuses bare scalars and null in both dialects.
      if (isObj(value) || (Array.isArray(value) && (options.allowArray || !d.body.requireJsonType)))
        return value
      throw new HttpError(400, `Expected a JSON object${options.allowArray ? ' or array' : ''} as the body`)
    },
  }
}

/** The body as an object (arrays read as {} where the dialect is lenient). */
export async function objectBody(ctx: Ctx, optional = false): Promise<Obj> {
  const value = await ctx.body({ optional })
  return isObj(value) ? value : {}
}
