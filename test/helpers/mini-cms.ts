// A tiny in-memory CMS on a real port for the client's unit tests (before and beside the
// emulator): spec-dialect routes for the four JSON kinds, plus hooks that let a test answer a
// request itself (faults, odd statuses) and a log of every request with its arrival time.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRemoteClient, type RemoteClient } from '../../src/remote/index.js'

export interface SeenRequest {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
  at: number
}

/** Return true when the hook answered (or dropped) the request itself. */
export type Hook = (
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  seen: SeenRequest,
) => boolean | Promise<boolean>

export interface MiniCms {
  url: string
  requests: SeenRequest[]
  store: Map<string, Map<string, Record<string, unknown>>>
  hook: Hook | undefined
  /** Applies a write as the server would (used by hooks that apply, then fail). */
  apply(seg: string, id: string, body: string): Record<string, unknown>
  close(): Promise<void>
}

const SEGMENTS = ['schemas', 'content', 'forms', 'connections']

export async function startMiniCms(opts: { project?: string; environment?: string } = {}): Promise<MiniCms> {
  const P = `/api/${opts.project ?? 'demo'}/${opts.environment ?? 'live'}`
  const store = new Map<string, Map<string, Record<string, unknown>>>(SEGMENTS.map((s) => [s, new Map()]))
  const requests: SeenRequest[] = []
  const sockets = new Set<import('node:net').Socket>()

  function apply(seg: string, id: string, body: string): Record<string, unknown> {
    const item = {
      ...(JSON.parse(body) as Record<string, unknown>),
      id,
      updateDate: new Date().toISOString(),
    }
    store.get(seg)!.set(id, item)
    return item
  }

  function json(res: ServerResponse, status: number, value: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(value))
  }
  function text(res: ServerResponse, status: number, value: string): void {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' })
    res.end(value)
  }

  const cms: MiniCms = {
    url: '',
    requests,
    store,
    hook: undefined,
    apply,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString('utf8')
    const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, at: Date.now() }
    requests.push(seen)
    if (cms.hook && (await cms.hook(req, res, body, seen))) return
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname === '/api/user') return json(res, 200, { id: 'u1', username: 'admin' })
    if (!url.pathname.startsWith(`${P}/`)) return text(res, 404, `Project "x" could not be found`)
    const [seg = '', rawId] = url.pathname.slice(P.length + 1).split('/')
    const list = store.get(seg === 'schema' ? 'schemas' : seg)
    if (!list) return text(res, 404, 'Cannot GET')
    const id = rawId === undefined ? undefined : decodeURIComponent(rawId)
    if (id === undefined && req.method === 'GET') return json(res, 200, [...list.values()])
    if (id === undefined) return text(res, 400, 'bad route')
    if (req.method === 'GET') {
      const item = list.get(id)
      return item ? json(res, 200, item) : text(res, 404, `Item "${id}" was not found`)
    }
    if (req.method === 'POST') return json(res, 200, apply(seg, id, body))
    if (req.method === 'DELETE') {
      if (!list.delete(id)) return text(res, 404, `Item "${id}" was not found`)
      return text(res, 200, 'deleted')
    }
    text(res, 405, 'no')
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  cms.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return cms
}

/** The token the client tests send the mini CMS (it checks none; tests look for it in logs). */
export const MINI_CMS_TOKEN = '0123456789abcdef0123456789abcdef01234567'

/** A spec-dialect client of `cms`, quick to retry and never held by the rate limit; `extra` overrides. */
export function miniCmsClient(
  cms: MiniCms,
  extra: Partial<Parameters<typeof createRemoteClient>[0]> = {},
): Promise<RemoteClient> {
  return createRemoteClient({
    server: cms.url,
    project: 'demo',
    environment: 'live',
    token: MINI_CMS_TOKEN,
    dialect: 'spec',
    rateLimit: { requestsPerSecond: 1000, concurrency: 8 },
    backoff: { baseMs: 10, capMs: 40 },
    ...extra,
  })
}
