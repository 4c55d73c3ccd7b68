// Opens what an engine command needs: the workspace, its config, the lock (for commands that
// change things), a connected client and the engine's dependencies. Closes it all afterwards,
// whatever happened, so a failed run never leaves the lock or a socket behind.

import path from 'node:path'
import type { Command } from 'commander'
import type { EngineDeps } from '../engine/plan-apply-types.js'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import type { RemoteClient } from '../remote/index.js'
import { createCodecs } from '../workspace/codecs.js'
import { FOLDER_OF } from '../workspace/kinds.js'
import { connect, globalOptions, openWorkspace, type Workspace } from './context.js'
import type { CliIo } from './io.js'

export interface EngineSession {
  ws: Workspace
  deps: EngineDeps
  /** The path arguments as workspace-relative paths. */
  scope: string[]
  /** The same client as deps.client, with the routes beyond the engine's (request, pull/push). */
  client: RemoteClient
}

/**
 * Turns path arguments into workspace-relative paths. Like `git -C`, `-C <workspace>` means
 * "run from there", so paths then count from the workspace; otherwise from the working folder.
 */
export function scopeOf(base: string, root: string, paths: readonly string[]): string[] {
  return paths.map((p) => {
    const relative = path.relative(root, path.resolve(base, p))
    if (relative.startsWith('..') || path.isAbsolute(relative)) {
      throw new CliError(`${p} is outside the workspace ${root}`, ExitCode.usage)
    }
    return relative.split(path.sep).join('/')
  })
}

/** Waiting for a server that cannot be reached yet (watch starts anyway). */
export interface UntilReachable {
  /** Give up waiting (the body is then not run). */
  stop: Promise<unknown>
  /** Told each time the server could not be reached, before waiting retryInMs. */
  onWait(error: string, retryInMs: number): void
  /** Told once it is reached after a wait. */
  onReached(): void
}

const MAX_CONNECT_WAIT_MS = 30_000

/** The first call's promise, for every call after it. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined
  return () => {
    made ??= make()
    return made
  }
}

/**
 * connect(), retried with a growing wait while the server cannot be reached (a network error or
 * a timeout: it may be down, or the laptop offline); undefined when `stop` came first. Anything
 * else (a refused token, a wrong project) is not waited out.
 */
async function connectWhenReachable(
  io: CliIo,
  ws: Workspace,
  until: UntilReachable,
  rebind: boolean,
): Promise<RemoteClient | undefined> {
  const { RemoteError } = await import('../remote/errors.js')
  let stopped = false
  void until.stop.then(() => {
    stopped = true
  })
  for (let attempt = 0; ; attempt++) {
    try {
      const client = await connect(io, ws, { rebind })
      if (attempt > 0) until.onReached()
      return client
    } catch (error) {
      const unreachable =
        error instanceof RemoteError && (error.code === 'network' || error.code === 'timeout')
      if (!unreachable || stopped) throw error
      const waitMs = Math.min(MAX_CONNECT_WAIT_MS, 1_000 * 2 ** attempt)
      until.onWait((error as Error).message, waitMs)
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        until.stop,
        new Promise((resolve) => {
          timer = setTimeout(resolve, waitMs)
        }),
      ])
      clearTimeout(timer)
      if (stopped) return undefined
    }
  }
}

export async function withEngine<T>(
  io: CliIo,
  cmd: Command,
  paths: readonly string[],
  opts: { lock: boolean; checksum?: boolean; untilReachable?: UntilReachable },
  body: (session: EngineSession) => Promise<T>,
): Promise<T | undefined> {
  const ws = await openWorkspace(io, cmd)
  const scope = scopeOf(globalOptions(cmd).dir ? ws.root : io.cwd, ws.root, paths)
  // Loaded only here: proper-lockfile installs signal handlers (signal-exit) as it loads, which
  // would change how every other command (the emulator, watch) ends on SIGTERM.
  const release = opts.lock
    ? await (await import('../state/lock.js')).acquireLock(ws.root, cmd.name())
    : undefined
  try {
    // Runs that may add to .cms-sync/trash/ also prune it, holding the lock as they do.
    if (release) await pruneOldTrash(ws)
    // What a killed run left (temp files) goes before anything looks at the workspace; a run of
    // named paths reads no synced folder for it (temp-files.ts).
    if (release) {
      const cleaned = await (await import('../workspace/temp-files.js')).cleanLeftTempFiles(ws.root, {
        folders: scope.length === 0,
      })
      if (cleaned.length > 0) ws.logger.info({ paths: cleaned }, 'temp files a stopped run left were removed')
    }
    // --rebind (pull, push, sync) lets the token go to a server the workspace is not bound to yet.
    const rebind = cmd.opts<{ rebind?: boolean }>().rebind === true
    // status --anonymous reads with no token at all (a pull request's check needs none).
    const anonymous = cmd.opts<{ anonymous?: boolean }>().anonymous === true
    const client = opts.untilReachable
      ? await connectWhenReachable(io, ws, opts.untilReachable, rebind)
      : await connect(io, ws, { rebind, anonymous })
    if (client === undefined) return undefined
    try {
      const enabled = new Set<string>(ws.config.resources)
      const deps: EngineDeps = {
        root: ws.root,
        target: { server: ws.config.server, project: ws.config.project, environment: ws.config.environment },
        client,
        logger: ws.logger,
        codecs: createCodecs({ root: ws.root, env: io.env }).filter((codec) =>
          enabled.has(FOLDER_OF[codec.kind]),
        ),
        maxDeletePercent: ws.config.safety.maxDeletePercent,
        maxDeletes: ws.config.safety.maxDeletes,
        publishing: publishingFor(cmd, ws.config.publishing),
        // A base not kept in .cms-sync/bases/ (a fresh clone, a CI checkout) is looked up in git.
        baseFallback: async (item, hash, codec, orders) =>
          (await import('../workspace/git-base.js')).baseTextFromGit(
            ws.root,
            item.path,
            hash,
            codec,
            item.id,
            orders,
          ),
        // Asked once per run, and only when git had no base for an item changed on both sides.
        whyNoBase: once(async () => (await import('../workspace/git-base.js')).missingHistory(ws.root)),
        ...(enabled.has('media')
          ? {
              media: {
                api: (await import('../remote/media.js')).createMediaApi(client, {
                  maxBytes: ws.config.limits.mediaMB * 1024 * 1024,
                }),
                checksum: opts.checksum ?? false,
                concurrency: ws.config.rateLimit.concurrency,
                history: async (relativePath: string, file: string) =>
                  (await import('../workspace/git-base.js')).historyHoldsBytes(ws.root, relativePath, file),
              },
            }
          : {}),
      }
      return await body({ ws, deps, scope, client })
    } finally {
      await client.close()
    }
  } finally {
    await release?.()
  }
}

/** `--publish` / `--no-publish` on push and sync override cms-sync.yaml's publishing for one run. */
function publishingFor(cmd: Command, configured: 'auto' | 'manual'): 'auto' | 'manual' {
  const flag = cmd.opts<{ publish?: boolean }>().publish
  return flag === undefined ? configured : flag ? 'auto' : 'manual'
}

async function pruneOldTrash(ws: Workspace): Promise<void> {
  const { pruneTrash } = await import('../workspace/trash-retention.js')
  const days = ws.config.retention.trashDays
  const removed = await pruneTrash(ws.root, days)
  if (removed.length > 0)
    ws.logger.info({ removed, days }, `trash: removed ${removed.length} run folders older than ${days} days`)
}
