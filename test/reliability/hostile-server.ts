// A purpose-built hostile server (real node:http on a free port) speaking the spec dialect's
// routes, whose answers a test scripts: malicious ids, malformed JSON, endless bodies, redirects.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export type Handler = (req: IncomingMessage, res: ServerResponse, route: string) => void

export interface HostileServer {
  url: string
  seen: string[]
  handler: Handler
  /** Bytes written by streaming handlers (to prove a client stopped reading early). */
  bytesSent: number
  close(): Promise<void>
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

export async function startHostileServer(handler: Handler): Promise<HostileServer> {
  const sockets = new Set<Socket>()
  const hostile: HostileServer = { url: '', seen: [], handler, bytesSent: 0, close: async () => {} }
  const server = createServer((req, res) => {
    const route = (req.url ?? '').split('?')[0]!
    hostile.seen.push(`${req.method} ${route}`)
    req.resume()
    hostile.handler(req, res, route)
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  hostile.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  hostile.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
  return hostile
}

/** Streams `total` bytes of a JSON array that never ends well, stopping when the client hangs up. */
export function endlessJson(hostile: HostileServer, res: ServerResponse, total: number): void {
  res.writeHead(200, { 'content-type': 'application/json' })
  const chunk = Buffer.from(`${JSON.stringify({ id: 'x', pad: 'y'.repeat(65_000) })},`)
  res.write('[')
  const pump = (): void => {
    while (hostile.bytesSent < total) {
      hostile.bytesSent += chunk.length
      if (!res.write(chunk)) {
        res.once('drain', pump)
        return
      }
    }
    res.end('{}]')
  }
  res.on('close', () => res.removeAllListeners('drain'))
  pump()
}
