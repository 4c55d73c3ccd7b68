// What most commands need before they start: the global options, the workspace folder, its
// config, a logger and a connected remote client. Commands stay thin by asking here. Only light
// modules are imported up front; zod, yaml, pino and undici load when a command runs, so that
// `--help` and `--version` stay near Node's own start-up time.

import path from 'node:path'
import type { Command } from 'commander'
import type { Config } from '../config/config.js'
import { ConfigError } from '../config/errors.js'
import { findWorkspaceRoot } from '../config/find-root.js'
import { CliError, ExitCode } from '../errors/exit-codes.js'
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
  const config = await loadWorkspaceConfig(root)
  return { root, config, globals, logger: await commandLogger(io, globals, root, config) }
}

/**
 * cms-sync.yaml of a workspace, once its own files are known not to be links (no-follow.ts): the
 * first thing every command that opens a workspace does, before it reads or writes anything there.
 */
export async function loadWorkspaceConfig(root: string): Promise<Config> {
  const { refuseOwnLinks } = await import('../workspace/no-follow.js')
  refuseOwnLinks(root)
  const { loadConfig } = await import('../config/config.js')
  return loadConfig(root)
}

/** This command line (one per process; tests run many in one process): its words and its log. */
let commandLine: { argv: readonly string[]; started: number; logger?: Logger; file?: string } | undefined

/** A command line starts: no token origin yet, no log yet. */
export function beginCommandLine(argv: readonly string[]): void {
  commandLine = { argv, started: Date.now() }
  tokenOrigin = undefined
}

/**
 * The log of a command: the workspace log file, and stderr with -v (readable lines on a
 * terminal, pino's JSON lines in a pipe or a file). The first log of a command line with a
 * workspace records the command (its secrets left out), so every run in the file is named.
 */
export async function commandLogger(
  io: CliIo,
  globals: GlobalOptions,
  root?: string,
  config?: Pick<Config, 'retention'>,
): Promise<Logger> {
  const [{ createLogger, logFilePath }, { colorsFor }] = await Promise.all([
    import('../log/logger.js'),
    import('./colors.js'),
  ])
  const terminal = (io.stderr as { isTTY?: boolean }).isTTY === true
  const logger = createLogger({
    ...(root === undefined ? {} : { root }),
    level: globals.verbose ? 'debug' : 'info',
    ...(globals.verbose ? { stderr: io.stderr } : {}),
    ...(globals.verbose && terminal ? { pretty: colorsFor(io.env, true) } : {}),
    ...(config ? { logsDays: config.retention.logsDays } : {}),
    // A log file that cannot be written (a full disk) is said once; the command goes on without it.
    onFileError: (error, file) => {
      const what = error.code === 'ENOSPC' || error.code === 'EDQUOT' ? `disk full at ${file}` : error.message
      io.stderr.write(`cms-sync: the log cannot be written (${what}); logging stopped\n`)
    },
  })
  if (root !== undefined && commandLine && !commandLine.logger) {
    commandLine.logger = logger
    commandLine.file = logFilePath(root)
    const { commandLineForLog, shellLine } = await import('../log/command-line.js')
    const argv = commandLineForLog(commandLine.argv)
    logger.info({ argv, cwd: io.cwd, version: VERSION }, `run: cms-sync ${shellLine(argv)}`)
  }
  return logger
}

/** The version `--version` prints. */
export const VERSION = '0.1.0'

/** How a command line stopped: an error (a CliError, or an internal error: a bug). */
export interface Stop {
  error: unknown
  message: string
  exitCode: number
  internal: boolean
}

/**
 * Records the end of the command line in its log (if it opened one): its exit code, and for a
 * stop the error with its stack, which the terminal does not show. Waits until the lines are in
 * the file. Returns the log file when the stop was recorded there.
 */
export async function endCommandLine(exitCode: number, stop?: Stop): Promise<string | undefined> {
  const line = commandLine
  commandLine = undefined
  if (!line?.logger) return undefined
  const { logger } = line
  const ms = Date.now() - line.started
  if (stop) {
    const error = stop.error as (Error & { code?: unknown }) | undefined
    const { readableStack } = await import('./stack-traces.js')
    // Under `error`, not pino's `err`: its serializer would take this plain object for an error
    // and name its type "Object".
    const described = {
      type: error?.name ?? typeof error,
      message: error?.message ?? String(error),
      // A remote error's code (network, timeout, unauthorized, ...): the built CLI minifies the
      // class names its errors take as their names.
      ...(typeof error?.code === 'string' ? { code: error.code } : {}),
      ...(typeof error?.stack === 'string' ? { stack: readableStack(error.stack) } : {}),
      ...(error?.cause instanceof Error ? { cause: error.cause.stack ?? error.cause.message } : {}),
    }
    const fields = { exitCode, ms, error: described }
    if (stop.internal) logger.fatal(fields, `internal error: ${stop.message}`)
    else logger.error(fields, `stopped: ${stop.message}`)
  } else {
    logger.info({ exitCode, ms }, 'run ended')
  }
  const { settle } = await import('../log/logger.js')
  await settle(logger)
  return stop ? line.file : undefined
}

/** Where this process's token came from (one command per process): what a refusal names. */
let tokenOrigin: { server: string; source: 'env' | 'file' | 'none' | 'anonymous'; file: string } | undefined

/**
 * The message for a missing or refused token: where it came from and what helps. Undefined for
 * any other error, and in a command that connected with no token of ours (login).
 */
export function refusedTokenMessage(error: unknown): string | undefined {
  const e = error as { code?: unknown; method?: string; route?: string; status?: number }
  if (!tokenOrigin || e?.code !== 'unauthorized') return undefined
  const { server, source, file } = tokenOrigin
  const where = e.method && e.route ? ` (${e.method} ${e.route}${e.status ? ` -> ${e.status}` : ''})` : ''
  switch (source) {
    case 'anonymous':
      return `the server ${server} refused a read without a token${where}: it does not allow anonymous reads; give this check a token (one that may only read), without --anonymous`
    case 'none':
      return `not logged in to ${server}${where}: run \`cms-sync login\`, or set CMS_SYNC_TOKEN (in CI, from a secret)`
    case 'env':
      return `the server ${server} refused the token in CMS_SYNC_TOKEN${where} (expired, revoked, or for another server): set CMS_SYNC_TOKEN to a valid token (in CI, update the secret), or unset it to use the token of \`cms-sync login\``
    case 'file':
      return `the server ${server} refused the token stored for it in ${file}${where} (expired or revoked): run \`cms-sync login\` again`
  }
}

/**
 * The token goes only to the server the workspace is bound to. A cms-sync.yaml changed to name
 * another server (a commit, a pull request) would otherwise get CMS_SYNC_TOKEN with the first
 * listing, before the run's wrong-target guard stops it: so that guard's check of the server
 * comes first, and stops (exit 4) before any request. `rebind` is the user's word that the new
 * server is meant; init and login name their server themselves. A state or lock that cannot be
 * read binds nothing here (as if deleted); the run that needs it reports it.
 */
export async function refuseUnboundServer(
  root: string,
  server: string,
  rebind: boolean,
  /** What the command would have sent ("no password" for login). */
  withheld = 'nothing',
): Promise<void> {
  if (rebind) return
  const { boundServers, sameServer } = await import('../state/bound-servers.js')
  for (const { file, server: bound } of await boundServers(root)) {
    if (sameServer(bound, server)) continue
    throw new CliError(
      `safety stop: this workspace is bound to ${bound} (${file}), but cms-sync.yaml names ${server}; ${withheld} was sent to ${server}: the token goes only to the server a workspace is bound to. If the new server is meant, run \`cms-sync sync --rebind\``,
      ExitCode.safetyStop,
    )
  }
}

/** A client for the workspace's target, with the token of CMS_SYNC_TOKEN or the credentials file. */
export async function connect(
  io: CliIo,
  ws: Workspace,
  opts: { rebind?: boolean; anonymous?: boolean } = {},
): Promise<RemoteClient> {
  const { config } = ws
  // The environment's word on the target comes before the workspace's own (state, lock): a
  // commit can write both of those, never the environment (config/token-target.ts).
  const { refuseCommittedInsecureTls, refuseUnnamedTarget, requireNamedTarget } = await import(
    '../config/token-target.js'
  )
  refuseUnnamedTarget(io.env, config)
  refuseCommittedInsecureTls(io.env, config.tls.insecure)
  if (!opts.anonymous) requireNamedTarget(io.env, ['server', 'project', 'environment'])
  // The binding below reads the state: one a commit wrote (git overwrites an ignored file on a
  // checkout) would bind the token to the commit's server.
  await (await import('../workspace/git-base.js')).refuseCommittedSyncDir(ws.root)
  await refuseUnboundServer(ws.root, config.server, opts.rebind === true)
  const { createRemoteClient } = await import('../remote/index.js')
  const { resolveTokenSource } = await import('../config/credentials.js')
  const { token, source, file } = opts.anonymous
    ? { token: undefined, source: 'anonymous' as const, file: '' }
    : await resolveTokenSource(io.env, config.server)
  tokenOrigin = { server: config.server, source, file }
  return createRemoteClient({
    server: config.server,
    project: config.project,
    environment: config.environment,
    token,
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
