// Logging in: POST /api/user/login answers the token as a text body and as a `token` cookie in
// both dialects. Bad credentials are 401 (spec) or 403 (upstream); both become UnauthorizedError.

import type { Logger } from 'pino'
import { remoteError } from './errors.js'
import { createTransport } from './http.js'

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
    const res = await transport.send(request)
    if (res.status === 401 || res.status === 403) {
      const refused = transport.failure(
        request,
        res,
        `the server refused the login of "${opts.username}"`,
        'unauthorized',
      )
      // The next step for a refused login is a different password, not `cms-sync login`.
      throw Object.assign(refused, {
        message: refused.message.replace(/; run .*$/, '; check the user name and password'),
      })
    }
    if (res.status < 200 || res.status >= 300) throw transport.failure(request, res, 'could not log in')
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
