// What most commands need before they start: the global options, the workspace folder, its
// config, a logger and a connected remote client. Commands stay thin by asking here. Only light
// modules are imported up front; zod, yaml, pino and undici load when a command runs, so that
// `--help` and `--version` stay near Node's own start-up time.

import path from 'node:path'
import type { Command } from 'commander'
import type { Config } from '../config/config.js'
import { ConfigError } from '../config/errors.js'
import { findWorkspaceRoot } from '../config/find-root.js'
import type { Logger } from '../log/logger.js'
import type { RemoteClient } from '../remote/index.js'
import type { CliIo } from './io.js'

export interface GlobalOptions {
  dir?: string
  json?: boolean
  quiet?: boolean
  verbose?: boolean
  progress: boolean
}

export function globalOptions(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>()
}

/** `-C dir` (relative to the working folder), else the nearest folder upward with cms-sync.yaml. */
export async function workspaceRoot(io: CliIo, globals: GlobalOptions): Promise<string> {
  if (globals.dir) return path.resolve(io.cwd, globals.dir)
  const found = await findWorkspaceRoot(io.cwd)
  if (!found)
    throw new ConfigError(
      `no cms-sync.yaml in ${io.cwd} or any folder above it; run \`cms-sync init\` or pass -C <workspace>`,
    )
  return found
}

export interface Workspace {
  root: string
  config: Config
  globals: GlobalOptions
  logger: Logger
}

export async function openWorkspace(io: CliIo, cmd: Command): Promise<Workspace> {
  const globals = globalOptions(cmd)
  const root = await workspaceRoot(io, globals)
  const { loadConfig } = await import('../config/config.js')
  const config = await loadConfig(root)
  return { root, config, globals, logger: await commandLogger(globals, root) }
}

/** The log of a command: the workspace log file, and stderr with -v. */
export async function commandLogger(globals: GlobalOptions, root?: string): Promise<Logger> {
  const { createLogger } = await import('../log/logger.js')
  return createLogger({
    ...(root === undefined ? {} : { root }),
    level: globals.verbose ? 'debug' : 'info',
    stderr: globals.verbose === true,
  })
}

/** A client for the workspace's target, with the token of CMS_SYNC_TOKEN or the credentials file. */
export async function connect(io: CliIo, ws: Workspace): Promise<RemoteClient> {
  const { createRemoteClient } = await import('../remote/index.js')
  const { resolveToken } = await import('../config/credentials.js')
  const { config } = ws
  return createRemoteClient({
    server: config.server,
    project: config.project,
    environment: config.environment,
    token: await resolveToken(io.env, config.server),
    dialect: config.dialect,
    rateLimit: config.rateLimit,
    tlsInsecure: config.tls.insecure,
    listMaxBytes: config.limits.listingMB * 1024 * 1024,
    logger: ws.logger,
  })
}

/** Prints a line unless --quiet or --json. */
export function say(io: CliIo, globals: GlobalOptions, line: string): void {
  if (!globals.quiet && !globals.json) io.stdout.write(`${line}\n`)
}

export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
}
