// `cms-sync watch`: the daemon (src/watch/daemon.ts) under the workspace lock until Ctrl-C or
// SIGTERM. A second cms-sync on the same workspace, watch or one-shot, exits 5 naming this one.

import type { Command } from 'commander'
import { CliError, ExitCode } from '../../errors/exit-codes.js'
import { globalOptions } from '../context.js'
import { withEngine } from '../engine-session.js'
import type { CliIo } from '../io.js'
import { watchPrinter } from '../watch-output.js'

export function portNumber(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new CliError(`expected a port number from 0 to 65535 (0: a free one), got ${value}`, ExitCode.usage)
  return n
}

function positiveInt(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1)
    throw new CliError(`expected a whole number of seconds, got ${value}`, ExitCode.usage)
  return n
}

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('watch')
    .description('Keep the workspace and the server in step while you edit (Ctrl-C stops)')
    .option('--rescan-seconds <n>', 'deep rescan (re-read every file) this often', positiveInt, 300)
    .option(
      '--ui-port <port>',
      'serve the local page on this loopback port (default: ui.port, 0 = a free one)',
      portNumber,
    )
    .option('--no-ui', 'do not serve the local page')
    .action(async (opts: { rescanSeconds: number; uiPort?: number; ui: boolean }, cmd: Command) => {
      const globals = globalOptions(cmd)
      const { runDaemon } = await import('../../watch/daemon.js')
      const { credentialsPath, resolveToken } = await import('../../config/credentials.js')
      const emit = watchPrinter(io, globals)
      // A server that is down when the daemon starts is waited for, as one that goes away later
      // is: edits made meanwhile are found by the start-up reconcile once it is back.
      let told = false
      const untilReachable = {
        stop: io.stopSignal,
        onWait: (error: string) => {
          if (!told) emit({ event: 'offline', pending: 0, error })
          told = true
        },
        onReached: () => emit({ event: 'online' }),
      }
      await withEngine(io, cmd, [], { lock: true, untilReachable }, async ({ ws, deps, client }) => {
        let token = await resolveToken(io.env, ws.config.server)
        const fromEnv = Boolean(io.env.CMS_SYNC_TOKEN?.trim())
        // The local page (docs/page.md): on unless turned off; its address is printed once.
        const { startWatchPage } = await import('../page-session.js')
        const page = await startWatchPage(io, { ws, deps, client, scope: [] }, opts, emit)
        await runDaemon({
          onControl: page.onControl,
          renewToken: async () => {
            const next = await resolveToken(io.env, ws.config.server).catch(() => undefined)
            if (next === undefined || next === token) return false
            token = next
            client.setToken(next)
            return true
          },
          ...(fromEnv ? {} : { credentialsFile: credentialsPath(io.env) }),
          deps,
          thresholds: { massChange: ws.config.watch.massChange, massDelete: ws.config.watch.massDelete },
          verifyMedia: ws.config.watch.verifyMedia,
          debounceMs: ws.config.watch.debounceMs,
          publishQuietMs: ws.config.watch.publishQuietMs,
          pollMs: ws.config.watch.pollSeconds * 1000,
          rescanMs: opts.rescanSeconds * 1000,
          stopSignal: io.stopSignal,
          emit: page.emit,
        }).finally(page.close)
      })
      setExit(ExitCode.ok)
    })
}
