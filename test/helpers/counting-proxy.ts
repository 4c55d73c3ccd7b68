// A pass-through HTTP proxy in front of the emulator that records each request's method and
// path, so a test can assert which requests a command made (e.g. only listings).

import { createServer, request } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface CountingProxy {
  url: string
  seen: string[]
  close(): Promise<void>
}

export async function startCountingProxy(upstream: string): Promise<CountingProxy> {
  const target = new URL(upstream)
  const seen: string[] = []
  const sockets = new Set<Socket>()
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${(req.url ?? '').split('?')[0]}`)
    const forward = request(
      {
        hostname: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    forward.on('error', () => res.destroy())
    req.pipe(forward)
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
