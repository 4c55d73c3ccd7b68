// `cms-sync whoami`: who the token for the workspace's server (or --server) belongs to, and
// where it came from (CMS_SYNC_TOKEN or the credentials file); exit 2 when there is none or
// the server refuses it. The token itself is never printed.

import type { Command } from 'commander'
import { CliError, ExitCode } from '../../errors/exit-codes.js'
import { commandLogger, globalOptions, printJson, refuseUnboundServer, say } from '../context.js'
import type { CliIo } from '../io.js'
import { target } from './login.js'

export function register(program: Command, io: CliIo, _setExit: (code: number) => void): void {
  program
    .command('whoami')
    .description('Show who the stored token (or CMS_SYNC_TOKEN) logs in as, on the workspace server')
    .option('--server <url>', 'the server (default: the server of the workspace cms-sync.yaml)')
    .action(async (opts: { server?: string }, cmd: Command) => {
      const globals = globalOptions(cmd)
      const { server, config, root } = await target(io, globals, opts)
      // The workspace's server: only when the workspace is bound to it (a --server is the user's own).
      if (root !== undefined && opts.server === undefined) await refuseUnboundServer(root, server, false)
      const { credentialsPath, resolveToken } = await import('../../config/credentials.js')
      const token = await resolveToken(io.env, server)
      const { refuseCommittedInsecureTls } = await import('../../config/token-target.js')
      refuseCommittedInsecureTls(io.env, config?.tls.insecure ?? false)
      if (!token) throw new CliError(`not logged in to ${server}: run \`cms-sync login\``, ExitCode.usage)
      const fromEnv = Boolean(io.env.CMS_SYNC_TOKEN?.trim())
      const { whoAmI } = await import('../../remote/index.js')
      const user = await whoAmI({
        server,
        token,
        tlsInsecure: config?.tls.insecure ?? false,
        logger: await commandLogger(io, globals, root),
      })
      const name = typeof user.username === 'string' && user.username ? user.username : '(unnamed user)'
      const where = fromEnv ? 'CMS_SYNC_TOKEN' : credentialsPath(io.env)
      if (globals.json)
        printJson(io, {
          server,
          username: name,
          source: fromEnv ? 'env' : 'credentials',
          file: fromEnv ? null : where,
        })
      else say(io, globals, `logged in to ${server} as ${name} (token from ${where})`)
    })
}
