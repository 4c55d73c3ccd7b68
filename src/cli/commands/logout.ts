// `cms-sync logout`: forgets the stored token for the workspace's server (or --server) and ends
// it on the server, so a token left in a backup is worth nothing. CMS_SYNC_TOKEN is the
// environment's, not ours to forget: it is named when set.

import type { Command } from 'commander'
import { commandLogger, globalOptions, printJson, say } from '../context.js'
import type { CliIo } from '../io.js'
import { target } from './login.js'

export function register(program: Command, io: CliIo, _setExit: (code: number) => void): void {
  program
    .command('logout')
    .description('Forget the stored token for the workspace server and end it on the server')
    .option('--server <url>', 'the server (default: the server of the workspace cms-sync.yaml)')
    .action(async (opts: { server?: string }, cmd: Command) => {
      const globals = globalOptions(cmd)
      const { server, config, root } = await target(io, globals, opts)
      const { forgetToken } = await import('../../config/credentials.js')
      const token = await forgetToken(io.env, server)
      let ended = false
      if (token) {
        const { endToken } = await import('../../remote/index.js')
        ended = await endToken({
          server,
          token,
          tlsInsecure: config?.tls.insecure ?? false,
          logger: await commandLogger(io, globals, root),
        })
      }
      const envNote = io.env.CMS_SYNC_TOKEN?.trim() ? '; CMS_SYNC_TOKEN is still set in this environment' : ''
      if (globals.json) {
        printJson(io, { server, forgotten: token !== undefined, endedOnServer: ended })
        return
      }
      if (!token) say(io, globals, `not logged in to ${server} (no stored token)${envNote}`)
      else
        say(
          io,
          globals,
          `logged out of ${server}${ended ? '' : ' (the server could not be told; the token was forgotten here)'}${envNote}`,
        )
    })
}
