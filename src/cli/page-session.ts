// The local page wired to a workspace (src/page/ serves it): its status is status's own model
// (status-model.ts), its actions the engine calls the commands make
// (engine/resolve-restore-release.ts).
// Under `watch` the daemon carries every action out between two of its runs, on its own state;
// under `ui` each action takes the workspace lock like a command (or, should a watch hold it,
// asks that daemon, as `resolve` and `restore` do).

import path from 'node:path'
import type { Command } from 'commander'
import type { Outcome } from '../engine/outcome.js'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import type { StatusInput } from '../page/model.js'
import type { PageActions, PageServer } from '../page/server.js'
import type { RemoteClient } from '../remote/index.js'
import type { DaemonControl } from '../watch/daemon.js'
import type { SettleRequest } from '../watch/requests.js'
import type { WatchEvent } from '../watch/watch-events.js'
import { conflictCopyPath } from '../workspace/local-writes.js'
import type { Workspace } from './context.js'
import { type EngineSession, withEngine } from './engine-session.js'
import type { CliIo } from './io.js'

async function tokenSource(io: CliIo, ws: Workspace): Promise<string> {
  const { resolveTokenSource } = await import('../config/credentials.js')
  const { source, file } = await resolveTokenSource(io.env, ws.config.server)
  if (source === 'env') return 'the environment (CMS_SYNC_TOKEN)'
  if (source === 'file') return `the credentials file (${file})`
  return 'nowhere: not logged in (run `cms-sync login`)'
}

async function statusOf(session: EngineSession): Promise<StatusInput> {
  const { readStatus, statusDocument } = await import('./status-model.js')
  // The media the daemon's verifier found replaced are the daemon's next run's to read again
  // (a plan empties MediaDeps.recheck): the page's read, asked for by that very event, leaves them.
  const media = session.deps.media && { ...session.deps.media }
  if (media) delete media.recheck
  const deps = media ? { ...session.deps, media } : session.deps
  const read = await readStatus({ ...session, deps, scope: [] })
  return { ...read, document: statusDocument(session.deps.target, read) }
}

function mediaFile(ws: Workspace) {
  return (rel: string, side: 'local' | 'remote') =>
    side === 'local' ? path.join(ws.root, ...rel.split('/')) : conflictCopyPath(ws.root, rel)
}

async function serve(
  ws: Workspace,
  io: CliIo,
  mode: 'watch' | 'ui',
  port: number,
  source: {
    readStatus(): Promise<StatusInput>
    daemon: () => ReturnType<DaemonControl['state']> | undefined
    client?: RemoteClient
  },
  actions: Omit<PageActions, 'mediaFile'>,
): Promise<PageServer> {
  const { startPageServer } = await import('../page/server.js')
  const { rateLimit } = ws.config
  return startPageServer(
    {
      mode,
      target: { server: ws.config.server, project: ws.config.project, environment: ws.config.environment },
      tokenSource: await tokenSource(io, ws),
      rateLimit: () => ({ ...rateLimit, rateLimited: source.client?.stats().rateLimited ?? 0 }),
      readStatus: source.readStatus,
      daemon: source.daemon,
    },
    { ...actions, mediaFile: mediaFile(ws) },
    { port },
  )
}

/** The page of a running `watch`: `control` is the daemon's handle, there once it serves requests. */
export function watchPage(
  io: CliIo,
  session: EngineSession,
  port: number,
  control: () => DaemonControl | undefined,
): Promise<PageServer> {
  const daemon = () => {
    const c = control()
    if (!c)
      throw new CliError(
        'cms-sync watch is still starting (its start-up reconcile); try again in a moment',
        ExitCode.locked,
      )
    return c
  }
  return serve(
    session.ws,
    io,
    'watch',
    port,
    { readStatus: () => statusOf(session), daemon: () => control()?.state(), client: session.client },
    {
      resolve: ({ scope, leaves, keep }) => daemon().settle({ command: 'resolve', scope, keep, leaves }),
      restore: (paths) => daemon().settle({ command: 'restore', scope: paths, keep: 'remote' }),
      release: (paths) => daemon().release(paths),
    },
  )
}

/**
 * `watch`'s page, unless `--no-ui` or `ui.enabled: false` (a `--ui-port` turns it on): its address
 * is told once (as the `page` event: the printer shows it, the log never gets it), every daemon
 * event goes to it, and the daemon's handle reaches it once the daemon serves requests.
 */
export async function startWatchPage(
  io: CliIo,
  session: EngineSession,
  opts: { ui: boolean; uiPort?: number },
  print: (event: WatchEvent) => void,
): Promise<{
  emit(event: WatchEvent): void
  onControl(control: DaemonControl): void
  close(): Promise<void>
}> {
  let control: DaemonControl | undefined
  const { ui } = session.ws.config
  const page =
    opts.ui && (ui.enabled || opts.uiPort !== undefined)
      ? await watchPage(io, session, opts.uiPort ?? ui.port, () => control)
      : undefined
  if (page) print({ event: 'page', url: page.url })
  return {
    emit: (event) => {
      print(event)
      page?.publish(event)
    },
    onControl: (c) => {
      control = c
    },
    close: async () => {
      await page?.close()
    },
  }
}

/** The page of `cms-sync ui`: no daemon; each action is a command's run under the workspace lock. */
export async function workspacePage(
  io: CliIo,
  cmd: Command,
  ws: Workspace,
  port: number,
): Promise<PageServer> {
  const { lockHolder } = await import('../state/lock.js')
  /** A running watch holds the lock: resolve and restore go to it, as the commands do. */
  async function viaWatch(request: SettleRequest): Promise<Outcome | undefined> {
    const holder = await lockHolder(ws.root)
    if (holder?.command !== 'watch') return undefined
    const { askDaemon } = await import('../watch/requests.js')
    const reply = await askDaemon(ws.root, holder.pid, request)
    if (reply === undefined) return undefined
    if ('error' in reply) throw new CliError(reply.error.message, reply.error.exitCode as ExitCode)
    return reply.outcome
  }
  const locked = async <T>(body: (session: EngineSession) => Promise<T>): Promise<T> => {
    const result = await withEngine(io, cmd, [], { lock: true }, body)
    if (result === undefined) throw new CliError('the run did not start', ExitCode.failed)
    return result
  }
  const settle = await import('../engine/resolve-restore-release.js')
  return serve(
    ws,
    io,
    'ui',
    port,
    {
      readStatus: async () => {
        const status = await withEngine(io, cmd, [], { lock: false }, statusOf)
        if (status === undefined) throw new CliError('the status could not be read', ExitCode.failed)
        return status
      },
      daemon: () => undefined,
    },
    {
      resolve: async ({ scope, leaves, keep }) =>
        (await viaWatch({ command: 'resolve', scope, keep, leaves })) ??
        locked(({ deps }) =>
          settle.resolveConflicts(deps, { scope, keep, leaves: new Map(Object.entries(leaves)) }),
        ),
      restore: async (paths) =>
        (await viaWatch({ command: 'restore', scope: paths, keep: 'remote' })) ??
        locked(({ deps }) => settle.restoreEdits(deps, paths)),
      release: (paths) =>
        locked(async ({ deps }) => {
          const outcome = await settle.releaseHeld(deps, paths)
          // As an explicit `cms-sync push` does: the go-ahead a paused watcher waits for.
          if (outcome.failed.length === 0)
            await (await import('../watch/mass-change.js')).clearPause(deps.root)
          return outcome
        }),
    },
  )
}
