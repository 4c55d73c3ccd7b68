// The small HTTP layer under the emulator: a handler returns a Reply instead of writing to
// the socket, so the fault layer can decide afterwards to send it, delay it or drop it.

import type { IncomingMessage } from 'node:http'
import type { Readable } from 'node:stream'

export type Reply = {
  status: number
  headers?: Record<string, string | string[]>
  body?: string | Buffer | Readable
  /** Content-Length of a streamed body. */
  length?: number
}

/** A failure the handler reports to the client; the dialect decides the status it maps to. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
  }
}

export function json(value: unknown, status = 200): Reply {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(value),
  }
}

export function text(body: string, status = 200, type = 'text/plain'): Reply {
  return { status, headers: { 'content-type': `${type}; charset=utf-8` }, body }
}

export function readCookies(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {}
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const name = part.slice(0, eq).trim()
    try {
      out[name] = decodeURIComponent(part.slice(eq + 1).trim())
    } catch {
      out[name] = part.slice(eq + 1).trim()
    }
  }
  return out
}

/**
 * Reads a whole body, refusing it with 413 as soon as it passes the limit so an oversized
 * upload is never held in memory. A declared Content-Length over the limit fails at once.
 */
export async function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const tooLarge = () =>
    new HttpError(413, `Request body is larger than the limit of ${Math.round(limitBytes / 1048576)} MB`)
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge()
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limitBytes) throw tooLarge()
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

export type RouteMatch<H> = { handler: H; params: Record<string, string> }

/** Matches paths segment by segment, first registered route wins (as Express does). */
export class Router<H> {
  private readonly routes: Array<{ method: string; parts: string[]; handler: H }> = []

  add(method: string, pattern: string, handler: H): void {
    this.routes.push({ method, parts: pattern.split('/').filter(Boolean), handler })
  }

  match(method: string, path: string): RouteMatch<H> | undefined {
    const segments = path.split('/').filter(Boolean)
    for (const route of this.routes) {
      if (route.method !== method || route.parts.length !== segments.length) continue
      const params: Record<string, string> = {}
      let ok = true
      for (let i = 0; i < segments.length && ok; i++) {
        const part = route.parts[i]!
        let segment: string
        try {
          segment = decodeURIComponent(segments[i]!)
        } catch {
          ok = false
          break
        }
        if (part.startsWith(':')) params[part.slice(1)] = segment
        else ok = part === segment
      }
      if (ok) return { handler: route.handler, params }
    }
    return undefined
  }

  /** Whether any method serves this path (for OPTIONS preflights). */
  hasPath(path: string): boolean {
    return ['GET', 'POST', 'PUT', 'DELETE'].some((m) => this.match(m, path) !== undefined)
  }
}
