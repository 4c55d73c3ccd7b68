// `cms-sync login`: exchanges a user name and password for a token and stores it for the
// server (credentials file, mode 0600). The password comes from a no-echo prompt on a terminal
// or from stdin with --password-stdin, never from an argument (it would show in `ps`).

import { createInterface } from 'node:readline/promises'
import type { Command } from 'commander'
import type { Config } from '../../config/config.js'
import { ConfigError } from '../../config/errors.js'
import { CliError, ExitCode } from '../../errors/exit-codes.js'
import {
  commandLogger,
  type GlobalOptions,
  globalOptions,
  loadWorkspaceConfig,
  printJson,
  refuseUnboundServer,
  say,
  workspaceRoot,
} from '../context.js'
import type { CliIo } from '../io.js'

export interface LoginOptions {
  username?: string
  passwordStdin?: boolean
  persist?: boolean
  server?: string
}

async function readAll(stream: NonNullable<CliIo['stdin']>): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
  return Buffer.concat(chunks).toString('utf8')
}

async function ask(io: CliIo, question: string): Promise<string> {
  const rl = createInterface({ input: io.stdin!, output: io.stderr, terminal: true })
  try {
    return (await rl.question(question)).trim()
  } finally {
    rl.close()
  }
}

/** Reads a line from the terminal in raw mode, echoing nothing. */
function askHidden(io: CliIo, question: string): Promise<string> {
  const input = io.stdin!
  // Raw (no echo) before the prompt shows: a password typed or pasted the moment the prompt
  // appears would otherwise be echoed by the terminal (seen on a pty in terminal-and-pipes.test.ts).
  input.setRawMode?.(true)
  io.stderr.write(question)
  input.resume()
  input.setEncoding('utf8')
  return new Promise((resolve, reject) => {
    let value = ''
    const finish = () => {
      input.setRawMode?.(false)
      input.pause()
      input.off('data', onData)
      io.stderr.write('\n')
    }
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') {
          finish()
          resolve(value)
          return
        }
        if (char === '\u0003') {
          finish()
          reject(new CliError('login cancelled', ExitCode.usage))
          return
        }
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1)
        else value += char
      }
    }
    input.on('data', onData)
  })
}

/** The server to log in to, and the workspace settings that go with it (TLS opt-out). */
export async function target(
  io: CliIo,
  globals: GlobalOptions,
  opts: LoginOptions,
): Promise<{ server: string; config?: Config; root?: string }> {
  if (opts.server) (await import('../../config/config.js')).checkServerUrl(opts.server, '--server')
  if (opts.server && !globals.dir) return { server: opts.server }
  let root: string
  try {
    root = await workspaceRoot(io, globals)
  } catch (error) {
    if (error instanceof ConfigError)
      throw new ConfigError(`${error.message}\n(or name the server: cms-sync login --server <url>)`)
    throw error
  }
  const config = await loadWorkspaceConfig(root)
  return { server: opts.server ?? config.server, config, root }
}

export function register(program: Command, io: CliIo, _setExit: (code: number) => void): void {
  program
    .command('login')
    .description("log in to the workspace's server and store the token (credentials.yaml, mode 0600)")
    .option('--username <name>', 'the user name (asked on a terminal when missing)')
    .option('--password-stdin', 'read the password from stdin (for scripts and CI)')
    .option('--persist', 'ask for a token that does not expire (otherwise it lasts 8 hours)')
    .option('--server <url>', 'the server (default: the server of the workspace cms-sync.yaml)')
    .action(async (opts: LoginOptions, cmd: Command) => {
      const globals = globalOptions(cmd)
      const { server, config, root } = await target(io, globals, opts)
      const { refuseCommittedInsecureTls, refuseLoginTarget } = await import('../../config/token-target.js')
      refuseLoginTarget(io.env, server, opts.server !== undefined)
      refuseCommittedInsecureTls(io.env, config?.tls.insecure ?? false)
      // A server only cms-sync.yaml names (a pulled commit may have changed it) gets a password
      // only if the workspace is bound to it, as it would a token; --server is the user's own word.
      if (root !== undefined && opts.server === undefined)
        await refuseUnboundServer(root, server, false, 'no password').catch(
          (error: Error & { exitCode?: ExitCode }) => {
            throw new CliError(
              `${error.message}; to log in to ${server} all the same, name it yourself: cms-sync login --server ${server}`,
              error.exitCode ?? ExitCode.safetyStop,
            )
          },
        )
      const tty = io.stdin?.isTTY === true
      let username = opts.username
      if (!username) {
        if (!tty || opts.passwordStdin)
          throw new CliError('give the user name with --username', ExitCode.usage)
        username = await ask(io, 'Username: ')
      }
      let password: string
      if (opts.passwordStdin) {
        if (!io.stdin) throw new CliError('--password-stdin: there is no stdin to read', ExitCode.usage)
        // One trailing newline (from echo or a file) is not part of the password.
        password = (await readAll(io.stdin)).replace(/\r?\n$/, '')
      } else {
        if (!tty)
          throw new CliError(
            'no terminal to ask for the password: pipe it in with --password-stdin (or set CMS_SYNC_TOKEN instead of logging in)',
            ExitCode.usage,
          )
        password = await askHidden(io, `Password for ${username} at ${server}: `)
      }
      if (!username || !password)
        throw new CliError('the user name and password must not be empty', ExitCode.usage)

      const { login, whoAmI } = await import('../../remote/index.js')
      const { saveToken } = await import('../../config/credentials.js')
      const logger = await commandLogger(io, globals, root)
      const tlsInsecure = config?.tls.insecure ?? false
      const { token } = await login({
        server,
        username,
        password,
        persist: opts.persist === true,
        tlsInsecure,
        logger,
      })
      // Confirm the token before storing it, and learn the name the server knows the user by.
      const user = await whoAmI({ server, token, tlsInsecure, logger })
      await saveToken(io.env, server, token)
      const name = typeof user.username === 'string' && user.username ? user.username : username
      logger.info({ server, username: name, persist: opts.persist === true }, 'logged in')
      if (globals.json) printJson(io, { server, username: name })
      else say(io, globals, `logged in to ${server} as ${name}`)
    })
}
