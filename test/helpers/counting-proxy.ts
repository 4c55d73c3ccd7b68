// A pass-through HTTP proxy in front of the emulator that records each request's method and
// path, so a test can assert which requests a command made (e.g. only listings).

import { createServer, request } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/** A canned answer for a request (with headers of its own, or later), or undefined to forward it. */
export type Override = (
  method: string,
  path: string,
  headers: import('node:http').IncomingHttpHeaders,
) => Canned | undefined | Promise<Canned | undefined>

export interface Canned {
  status: number
  body: string
  headers?: Record<string, string>
}

/** Like Override, but sees the request body (the proxy reads it whole first). */
export type BodyOverride = (
  method: string,
  path: string,
  body: string,
) => { status: number; body: string } | undefined

export interface CountingProxy {
  url: string
  seen: string[]
  /** Each forwarded request with the server's status: `GET /api/... 304`. */
  answered: string[]
  override: Override | undefined
  /** When set, every request body is read whole before it is forwarded or answered. */
  overrideWithBody: BodyOverride | undefined
  /**
   * Requests this says yes to are forwarded, but their answer never reaches the client (its
   * connection stays open until the proxy closes): the server acted, the client never heard.
   * `held` gets each such request once the server has answered it.
   */
  hold: ((method: string, path: string) => boolean) | undefined
  held: { path: string; status: number }[]
  close(): Promise<void>
}

export async function startCountingProxy(upstream: string): Promise<CountingProxy> {
  const target = new URL(upstream)
  const seen: string[] = []
  const answered: string[] = []
  const sockets = new Set<Socket>()
  const proxy: CountingProxy = {
    url: '',
    seen,
    answered,
    override: undefined,
    overrideWithBody: undefined,
    hold: undefined,
    held: [],
    close: async () => {},
  }
  const server = createServer(async (req, res) => {
    const route = (req.url ?? '').split('?')[0]!
    seen.push(`${req.method} ${route}`)
    const canned = await proxy.override?.(req.method ?? 'GET', route, req.headers)
    if (canned) {
      req.resume()
      res.writeHead(canned.status, { 'content-type': 'application/json', ...canned.headers })
      res.end(canned.body)
      return
    }
    const withBody = proxy.overrideWithBody
    if (withBody) {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const body = Buffer.concat(chunks)
        const answer = withBody(req.method ?? 'GET', route, body.toString('utf8'))
        if (answer) {
          res.writeHead(answer.status, { 'content-type': 'text/plain' })
          res.end(answer.body)
        } else forward(req, res, body)
      })
      return
    }
    forward(req, res, undefined)
  })
  const forward = (
    req: import('node:http').IncomingMessage,
    res: import('node:http').ServerResponse,
    body: Buffer | undefined,
  ) => {
    const upstreamRequest = request(
      {
        hostname: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        answered.push(`${req.method} ${(req.url ?? '').split('?')[0]} ${answer.statusCode}`)
        if (proxy.hold?.(req.method ?? 'GET', (req.url ?? '').split('?')[0]!)) {
          answer.resume()
          answer.on('end', () => proxy.held.push({ path: req.url ?? '', status: answer.statusCode ?? 0 }))
          return
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstreamRequest.on('error', () => res.destroy())
    if (body) upstreamRequest.end(body)
    else req.pipe(upstreamRequest)
  }
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  proxy.url = `http://127.0.0.1:${port}`
  proxy.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
  return proxy
}
