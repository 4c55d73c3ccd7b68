// The local page's HTTP server (docs/page.md): loopback only, one per-run secret in every
// address (`http://127.0.0.1:<port>/s/<secret>/`), the page's three files, its event stream,
// media of the open conflicts, and three actions that go through the same engine calls as the
// commands: resolve, restore (drop held changes) and release (push them).

import { readFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import type { Outcome } from '../engine/outcome.js'
import type { Side } from '../engine/plan.js'
import { splitLeaf } from '../engine/resolve-restore-release.js'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import type { WatchEvent } from '../watch/watch-events.js'
import {
  COMMON_HEADERS,
  hostAllowed,
  MEDIA_CSP,
  newSecret,
  originAllowed,
  PAGE_CSP,
  safeRelativePath,
  sameSecret,
} from './checks.js'
import { createHub, type HubSource } from './hub.js'
import { headOf, sniffImage } from './media.js'

export interface PageActions {
  /** `resolve`: scope = files, folders or patterns; leaves = JSON Pointers per file. */
  resolve(request: { scope: string[]; leaves: Record<string, string[]>; keep: Side }): Promise<Outcome>
  /** `restore`: drop the local edits under these paths. */
  restore(paths: string[]): Promise<Outcome>
  /** Push held changes under these paths (deletions allowed). */
  release(paths: string[]): Promise<Outcome>
  /** The file holding one side of a media conflict (the workspace file, or the server's copy). */
  mediaFile(relativePath: string, side: 'local' | 'remote'): string
}

export interface PageServer {
  url: string
  port: number
  /** A daemon event, for the feed and a fresh status. */
  publish(event: WatchEvent): void
  refresh(): Promise<void>
  close(): Promise<void>
}

const ASSETS: Record<string, { file: string; type: string }> = {
  '': { file: 'index.html', type: 'text/html; charset=utf-8' },
  'page.js': { file: 'page.js', type: 'text/javascript; charset=utf-8' },
  'page.css': { file: 'page.css', type: 'text/css; charset=utf-8' },
}
/** A JSON body larger than this is refused (the largest action names a few thousand paths). */
const MAX_BODY_BYTES = 1024 * 1024
const MAX_PATHS = 10_000

/**
 * The assets next to this module (src/page/assets/ from the sources), or where the build copies
 * them beside the bundle (dist/cli/page-assets/, from main.js or a chunk below it).
 */
async function assetsDir(): Promise<string> {
  const here = import.meta.dirname
  for (const dir of [
    path.join(here, 'assets'),
    path.join(here, 'page-assets'),
    path.join(here, '..', 'page-assets'),
  ]) {
    if (
      await readFile(path.join(dir, 'index.html')).then(
        () => true,
        () => false,
      )
    )
      return dir
  }
  throw new Error(`the local page's files are missing beside ${here} (a broken install?)`)
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

function answer(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, { ...COMMON_HEADERS, 'Content-Type': type, ...extra })
  res.end(body)
}

function answerJson(res: ServerResponse, status: number, value: unknown): void {
  answer(res, status, 'application/json; charset=utf-8', JSON.stringify(value))
}

async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (!/^application\/json\b/.test(req.headers['content-type'] ?? ''))
    throw new HttpError(415, 'expected a JSON body (Content-Type: application/json)')
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'the request is too large')
    chunks.push(chunk as Buffer)
  }
  let value: unknown
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    throw new HttpError(400, 'the request body is not JSON')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HttpError(400, 'expected a JSON object')
  return value as Record<string, unknown>
}

function pathsOf(body: Record<string, unknown>): string[] {
  const paths = body.paths
  if (!Array.isArray(paths) || paths.length === 0 || paths.length > MAX_PATHS)
    throw new HttpError(400, `paths: expected a list of 1 to ${MAX_PATHS} workspace paths`)
  for (const p of paths) {
    const file = typeof p === 'string' ? p.split('#')[0] : p
    if (!safeRelativePath(file))
      throw new HttpError(400, `paths: ${JSON.stringify(p)} is not a workspace path`)
  }
  return paths as string[]
}

function keepOf(body: Record<string, unknown>): Side {
  if (body.keep !== 'local' && body.keep !== 'remote')
    throw new HttpError(400, 'keep: expected "local" or "remote"')
  return body.keep
}

export async function startPageServer(
  source: HubSource,
  actions: PageActions,
  opts: { port: number; secret?: string },
): Promise<PageServer> {
  const dir = await assetsDir()
  const assets = new Map<string, Buffer>()
  for (const [name, asset] of Object.entries(ASSETS))
    assets.set(name, await readFile(path.join(dir, asset.file)))
  const secret = opts.secret ?? newSecret()
  const hub = createHub(source)
  let port = opts.port

  async function act(name: string, body: Record<string, unknown>): Promise<Outcome> {
    switch (name) {
      case 'resolve': {
        const keep = keepOf(body)
        const scope: string[] = []
        const leaves: Record<string, string[]> = {}
        for (const arg of pathsOf(body).map(splitLeaf)) {
          if (arg.pointer === undefined) scope.push(arg.file)
          else leaves[arg.file] = [...(leaves[arg.file] ?? []), arg.pointer]
        }
        return actions.resolve({ scope, leaves, keep })
      }
      case 'restore':
        return actions.restore(pathsOf(body))
      case 'release':
        return actions.release(pathsOf(body))
      default:
        throw new HttpError(404, 'no such action')
    }
  }

  async function media(res: ServerResponse, url: URL): Promise<void> {
    const rel = url.searchParams.get('path')
    const side = url.searchParams.get('side')
    // Only the two sides of a media conflict the page shows: no other file is readable here.
    const open = hub.state().conflicts.some((c) => c.path === rel && c.kind === 'media')
    if (!safeRelativePath(rel) || (side !== 'local' && side !== 'remote') || !open)
      throw new HttpError(404, 'no such media conflict')
    const file = actions.mediaFile(rel, side)
    const type = sniffImage(await headOf(file).catch(() => Buffer.alloc(0)))
    const bytes = await readFile(file).catch(() => {
      throw new HttpError(404, `the ${side} side of ${rel} is not there`)
    })
    const name = `${path.posix.basename(rel)}${side === 'remote' ? '.server' : ''}`
    answer(res, 200, type ?? 'application/octet-stream', bytes, {
      'Content-Security-Policy': MEDIA_CSP,
      ...(type ? {} : { 'Content-Disposition': `attachment; filename="${name.replace(/[^\w.-]/g, '_')}"` }),
    })
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding: a page served under another name that now resolves here is refused.
    if (!hostAllowed(req.headers.host, port))
      throw new HttpError(421, 'this server answers only to 127.0.0.1 or localhost')
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`)
    const [, s, given, ...rest] = url.pathname.split('/')
    if (s !== 's' || given === undefined || !sameSecret(given, secret)) throw new HttpError(404, 'not found')
    const route = rest.join('/')
    if (rest.length === 0) {
      res.writeHead(308, { ...COMMON_HEADERS, Location: `/s/${secret}/` })
      res.end()
      return
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      const asset = ASSETS[route]
      if (asset) {
        return answer(
          res,
          200,
          asset.type,
          assets.get(route)!,
          route === '' ? { 'Content-Security-Policy': PAGE_CSP } : {},
        )
      }
      if (route === 'events') {
        res.writeHead(200, {
          ...COMMON_HEADERS,
          'Content-Type': 'text/event-stream; charset=utf-8',
          Connection: 'keep-alive',
        })
        hub.listen(res)
        return
      }
      if (route === 'state') return answerJson(res, 200, hub.state())
      if (route === 'media') return media(res, url)
      throw new HttpError(404, 'not found')
    }
    if (req.method === 'POST' && route.startsWith('api/')) {
      // CSRF: only this page may act; another site cannot send this Origin.
      if (!originAllowed(req.headers.origin, port))
        throw new HttpError(403, 'refused: the request does not come from this page (Origin)')
      const body = await readJsonBody(req)
      const outcome = await act(route.slice(4), body)
      answerJson(res, 200, { outcome })
      void hub.refresh()
      return
    }
    res.writeHead(405, { ...COMMON_HEADERS, Allow: 'GET, POST' })
    res.end()
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A refused request's body is read and dropped: answering before it would reset the connection.
      req.resume()
      if (res.headersSent) return void res.end()
      const e = error as Error & { exitCode?: number }
      // A usage error (a leaf not in conflict) is the request's; a held lock is a conflict of state.
      const status =
        error instanceof HttpError ? error.status : e.exitCode === 2 ? 400 : e.exitCode === 5 ? 409 : 500
      answerJson(res, status, {
        error: { message: e.message, ...(typeof e.exitCode === 'number' ? { exitCode: e.exitCode } : {}) },
      })
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new CliError(
              `the page's port ${opts.port} is taken (ui.port in cms-sync.yaml, or --ui-port / --port); choose another, or 0 for a free one`,
              ExitCode.usage,
            )
          : error,
      ),
    )
    // Loopback only: nothing on the network can reach the page.
    server.listen(opts.port, '127.0.0.1', () => resolve())
  })
  port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/s/${secret}/`,
    port,
    publish: (event) => hub.publish(event),
    refresh: () => hub.refresh(),
    close: async () => {
      hub.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
