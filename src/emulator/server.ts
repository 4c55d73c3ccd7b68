// The request pipeline: faults and rate limit, routing, project resolution, auth by
// dialect, the handler, then sending its Reply (or, for drop-after, not sending it).

import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import type { User } from './auth.js'
import { type Core, type Handler, makeCtx, type Route, type RouteOptions } from './context.js'
import { conditional, matches, versionEtag } from './etag.js'
import type { Faults } from './faults.js'
import { HttpError, type Reply, Router, readCookies, text } from './http.js'
import { parentOf } from './parent-sync.js'
import { Projects } from './projects.js'
import { names } from './store.js'

type Entry = { options: RouteOptions; handler: Handler }

export function buildRouter(
  registrars: Array<(route: Route, core: Core) => void>,
  core: Core,
): Router<Entry> {
  const router = new Router<Entry>()
  const route: Route = (method, pattern, options, handler) =>
    router.add(method, pattern, { options, handler })
  for (const register of registrars) register(route, core)
  return router
}

function tokenOf(req: IncomingMessage, url: URL, core: Core, cookieOnly: boolean): string | undefined {
  const cookie = readCookies(req).token
  if (cookie) return cookie
  if (cookieOnly && core.d.auth.cookieOnlyRoutes) return undefined
  const query = url.searchParams.get('token')
  if (query) return query
  if (core.d.auth.bearerHeader) {
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')
    if (match) return match[1]
  }
  return undefined
}

function authorize(core: Core, options: RouteOptions, user: User | undefined): void {
  if (options.auth === 'none') return
  if (!user) {
    if (core.d.auth.rejectAnonymous) {
      throw new HttpError(
        401,
        'Not logged in: send a valid token (cookie "token", ?token= or Authorization: Bearer)',
        {
          'www-authenticate': 'Bearer',
        },
      )
    }
    return // upstream lets anonymous callers through (§2.3)
  }
  if (options.auth === 'admin' && !user.isAdmin) throw core.d.auth.notAdmin()
}

function resolveProject(core: Core, params: Record<string, string>): void {
  const projects = new Projects(core.store)
  const { project, environment } = params
  if (project === undefined) return
  if (!projects.exists(project)) throw core.d.errors.unknownProject(`Project "${project}" could not be found`)
  if (environment !== undefined && !projects.hasEnvironment(project, environment)) {
    throw core.d.errors.unknownProject(`Environment "${environment}" was not found for project "${project}"`)
  }
}

export async function handle(
  core: Core,
  router: Router<Entry>,
  req: IncomingMessage,
  url: URL,
): Promise<Reply> {
  // HEAD is GET without a body (Node drops the body of a HEAD answer itself).
  const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET')
  const found = router.match(method, url.pathname)
  if (!found) {
    return text(`Cannot ${method} ${url.pathname}`, 404, core.d.textType)
  }
  try {
    // Scheduled publishes whose time has come run first, as if the server's minutely check had.
    await core.beforeRequest?.()
    const { options, handler } = found.handler
    const token = tokenOf(req, url, core, options.cookieOnly === true)
    const user = core.users.userForToken(token)
    // Spec answers "who are you" before "what is this", so a stranger learns nothing about
    // which projects exist; upstream resolves the project first (§1.2).
    if (core.d.auth.rejectAnonymous) {
      authorize(core, options, user)
      resolveProject(core, found.params)
    } else {
      resolveProject(core, found.params)
      authorize(core, options, user)
    }
    const ctx = makeCtx(core, req, url, found.params, user, token)
    if (!options.listing) return conditional(req, await handler(ctx))
    // A project that inherits lists its parent's items too: their versions live on the parent.
    const etag =
      core.d.listingEtag === 'version' && !parentOf(ctx)
        ? versionEtag(
            core.store,
            [
              ...options.listing.map((kind) => names.env(ctx.project, ctx.environment, kind)),
              // Content lists its schedule; settings say whether the project inherits.
              names.tasks,
              names.settings(ctx.project),
            ],
            url,
          )
        : undefined
    if (etag === undefined) {
      core.stats.listingsBuilt++
      return conditional(req, await handler(ctx))
    }
    const ifNoneMatch = req.headers['if-none-match']
    if (typeof ifNoneMatch === 'string' && matches(ifNoneMatch, etag))
      return { status: 304, headers: { etag } }
    core.stats.listingsBuilt++
    const reply = await handler(ctx)
    return reply.status === 200 ? { ...reply, headers: { ...reply.headers, etag } } : reply
  } catch (error) {
    if (error instanceof HttpError) {
      const reply = text(error.message, error.status, core.d.textType)
      return { ...reply, headers: { ...reply.headers, ...error.headers } }
    }
    core.log.warn(`internal error on ${method} ${url.pathname}: ${(error as Error).stack ?? String(error)}`)
    return text(`Internal error: ${(error as Error).message}`, 500, core.d.textType)
  }
}

export function send(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string | string[] | number> = { ...reply.headers }
  const body = reply.body
  if (body instanceof Readable) {
    if (reply.length !== undefined) headers['content-length'] = reply.length
    res.writeHead(reply.status, headers)
    body.on('error', () => res.destroy())
    body.pipe(res)
    return
  }
  if (body !== undefined) headers['content-length'] = Buffer.byteLength(body)
  res.writeHead(reply.status, headers)
  res.end(body)
}

/** Applies the fault decision around one request to /api or /media. */
export async function withFaults(
  faults: Faults,
  req: IncomingMessage,
  res: ServerResponse,
  run: () => Promise<Reply>,
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  const decision = faults.decide()
  switch (decision.kind) {
    case 'drop':
      req.socket.destroy()
      return
    case 'error':
      send(res, text(`Injected fault: server error ${decision.status}`, decision.status))
      return
    case '429':
    case 'rate-limit':
      send(res, {
        ...text(decision.kind === '429' ? 'Injected fault: too many requests' : 'Rate limit exceeded', 429),
        headers: { 'content-type': 'text/plain; charset=utf-8', 'retry-after': String(decision.retryAfter) },
      })
      return
    case 'slow':
      await sleep(decision.ms)
      break
    default:
      break
  }
  const reply = await run()
  if (decision.kind === 'drop-after') {
    // The write happened; the client never learns it did. The nastiest case for a client.
    if (reply.body instanceof Readable) reply.body.destroy()
    req.socket.destroy()
    return
  }
  send(res, reply)
}

/**
 * The node:http listener: parse the URL, run faults on /api and /media (not on the self-test's
 * own calls), answer, and close a connection whose body was left unread (a 413).
 * `timers` collects the delays of slow faults so close() can cancel them.
 */
export function requestListener(
  core: Core,
  router: Router<Entry>,
  faults: Faults,
  timers: Set<NodeJS.Timeout>,
) {
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer)
        resolve()
      }, ms)
      timers.add(timer)
    })
  return (req: IncomingMessage, res: ServerResponse): void => {
    let url: URL
    try {
      url = new URL(req.url ?? '/', 'http://emulator.invalid')
    } catch {
      send(res, text('Bad request URL', 400))
      return
    }
    const run = () => handle(core, router, req, url)
    const faulty =
      (url.pathname.startsWith('/api/') || url.pathname.startsWith('/media/')) &&
      req.headers['x-emulator-self-test'] !== core.selfTestKey
    const done = faulty ? withFaults(faults, req, res, run, sleep) : run().then((reply) => send(res, reply))
    done
      .then(() => {
        if (!req.complete) res.once('finish', () => req.destroy())
      })
      .catch((error: unknown) => {
        core.log.warn(`request failed: ${(error as Error).message}`)
        if (!res.headersSent) send(res, text('Internal error', 500))
        else res.destroy()
      })
  }
}
