// Logging in: POST /api/user/login answers the token as a text body and as a `token` cookie in
// both dialects. Bad credentials are 401 (spec) or 403 (upstream); both become UnauthorizedError.

import type { Logger } from 'pino'
import type { FailedAnswer } from './answer.js'
import { cookieHeader } from './capabilities.js'
import { remoteError, withNextStep } from './errors.js'
import { createTransport, type HttpRequest, type Transport } from './http.js'

export interface LoginResult {
  token: string
}

export interface LoginOptions {
  server: string
  username: string
  password: string
  /** A persistent token never expires; otherwise it lasts 8 hours (§2.2). */
  persist: boolean
  tlsInsecure?: boolean
  timeoutMs?: number
  logger?: Logger | undefined
}

function tokenFromCookie(setCookie: string | string[] | undefined): string | undefined {
  for (const cookie of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
    const match = /^token=([^;]+)/.exec(cookie)
    if (match?.[1]) return match[1]
  }
  return undefined
}

export async function login(opts: LoginOptions): Promise<LoginResult> {
  const transport = createTransport({
    server: opts.server,
    // A single request: a private queue at a modest limit is enough.
    rateLimit: { requestsPerSecond: 5, concurrency: 1 },
    timeoutMs: opts.timeoutMs,
    tlsInsecure: opts.tlsInsecure,
    logger: opts.logger,
  })
  const request = {
    method: 'POST',
    path: `/api/user/login?persist=${opts.persist}`,
    body: { username: opts.username, password: opts.password },
    responseType: 'text' as const,
    // Logging in twice only makes a second token: harmless to repeat.
    idempotent: true,
  }
  try {
    const answer = await transport.send(request)
    if (answer.kind !== 'ok') {
      if (!refusedToken(answer)) throw answer.fail('could not log in')
      const refused = transport.failure(
        request,
        answer.response,
        `the server refused the login of "${opts.username}"`,
        'unauthorized',
      )
      // The next step for a refused login is a different password, not `cms-sync login`.
      throw withNextStep(refused, 'check the user name and password')
    }
    const res = answer.response
    const text = typeof res.body === 'string' ? res.body.trim() : ''
    const token = /^[\x21-\x7e]{8,200}$/.test(text) ? text : tokenFromCookie(res.headers['set-cookie'])
    if (!token)
      throw remoteError('rejected', 'the server accepted the login but sent no token', {
        method: request.method,
        route: request.path,
        status: res.status,
      })
    return { token }
  } finally {
    await transport.close()
  }
}

/**
 * The user a token belongs to (`GET /api/user`, the one reliable probe in both dialects: upstream
 * reads protected routes anonymously, so resource statuses say nothing about the token).
 */
export async function probeUser(
  transport: Transport,
  token: string | undefined,
): Promise<Record<string, unknown>> {
  const request: HttpRequest = { method: 'GET', path: '/api/user' }
  const data = { method: 'GET', route: request.path }
  if (!token) throw remoteError('unauthorized', `no token for ${transport.server}`, data)
  const answer = await transport.send(request)
  if (answer.kind === 'ok') {
    const { body, status } = answer.response
    if (status === 200 && typeof body === 'object' && body !== null && !Array.isArray(body))
      return body as Record<string, unknown>
    throw transport.failure(request, answer.response, 'could not check the token')
  }
  if (refusedToken(answer))
    throw remoteError('unauthorized', `the token for ${transport.server} is not valid (expired or revoked)`, {
      ...data,
      status: answer.response.status,
    })
  throw answer.fail('could not check the token')
}

/**
 * Upstream refuses a login or a token with 403, spec with 401: both mean "log in again". These
 * routes are asked before the dialect is known, so both readings stand.
 */
function refusedToken(answer: FailedAnswer): answer is Extract<FailedAnswer, { response: object }> & {
  response: { status: number }
} {
  return answer.kind === 'unauthorized' || (answer.kind === 'rejected' && answer.error.code === 'forbidden')
}

/** probeUser for a server and token, without a project: what `login` uses to confirm its token. */
export async function whoAmI(opts: {
  server: string
  token: string
  tlsInsecure?: boolean
  timeoutMs?: number
  logger?: Logger | undefined
}): Promise<Record<string, unknown>> {
  const transport = createTransport({
    server: opts.server,
    rateLimit: { requestsPerSecond: 5, concurrency: 1 },
    token: opts.token,
    // The cookie is what both dialects read on /api/user.
    authHeaders: cookieHeader,
    timeoutMs: opts.timeoutMs,
    tlsInsecure: opts.tlsInsecure,
    logger: opts.logger,
  })
  try {
    return await probeUser(transport, opts.token)
  } finally {
    await transport.close()
  }
}

/**
 * `POST /api/user/logout`: ends the token on the server (both dialects read the cookie there).
 * Best effort: false when the server could not be told (the token is forgotten locally anyway).
 */
export async function endToken(opts: {
  server: string
  token: string
  tlsInsecure?: boolean
  logger?: Logger | undefined
}): Promise<boolean> {
  const transport = createTransport({
    server: opts.server,
    rateLimit: { requestsPerSecond: 5, concurrency: 1 },
    token: opts.token,
    authHeaders: cookieHeader,
    timeoutMs: 10_000,
    maxRetries: 1,
    tlsInsecure: opts.tlsInsecure,
    logger: opts.logger,
  })
  try {
    const answer = await transport.send({
      method: 'POST',
      path: '/api/user/logout',
      responseType: 'text',
      idempotent: true,
      redirectIsAnswer: true,
    })
    // The server answers with a redirect to its start page (302) once the token is ended.
    return answer.kind === 'ok'
  } catch {
    return false
  } finally {
    await transport.close()
  }
}
