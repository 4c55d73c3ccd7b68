// Opens what an engine command needs: the workspace, its config, the lock (for commands that
// change things), a connected client and the engine's dependencies. Closes it all afterwards,
// whatever happened, so a failed run never leaves the lock or a socket behind.

import path from 'node:path'
import type { Command } from 'commander'
import type { EngineDeps } from '../engine/run.js'
import type { RemoteClient } from '../remote/index.js'
import { createCodecs } from '../workspace/codecs.js'
import { FOLDER_OF } from '../workspace/kinds.js'
import { connect, globalOptions, openWorkspace, type Workspace } from './context.js'
import { CliError, ExitCode } from './exit-codes.js'
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

export async function withEngine<T>(
  io: CliIo,
  cmd: Command,
  paths: readonly string[],
  opts: { lock: boolean; checksum?: boolean },
  body: (session: EngineSession) => Promise<T>,
): Promise<T> {
  const ws = await openWorkspace(io, cmd)
  const scope = scopeOf(globalOptions(cmd).dir ? ws.root : io.cwd, ws.root, paths)
  // Loaded only here: proper-lockfile installs signal handlers (signal-exit) as it loads, which
  // would change how every other command (the emulator, watch) ends on SIGTERM.
  const release = opts.lock
    ? await (await import('../state/lock.js')).acquireLock(ws.root, cmd.name())
    : undefined
  try {
    const client = await connect(io, ws)
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
        ...(enabled.has('media')
          ? {
              media: {
                api: (await import('../remote/media.js')).createMediaApi(client, {
                  maxBytes: ws.config.limits.mediaMB * 1024 * 1024,
                }),
                checksum: opts.checksum ?? false,
                concurrency: ws.config.rateLimit.concurrency,
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
