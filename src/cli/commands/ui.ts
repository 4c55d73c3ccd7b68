// `cms-sync ui`: the local page (docs/page.md) for a workspace without the daemon, until Ctrl-C.
// Nothing syncs on its own; each action on the page is a command's run under the workspace lock.

import type { Command } from 'commander'
import { ExitCode } from '../../errors/exit-codes.js'
import { globalOptions, openWorkspace } from '../context.js'
import type { CliIo } from '../io.js'
import { portNumber } from './watch.js'

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('ui')
    .description('Serve the local page (state, conflicts, held changes) for a workspace without the daemon')
    .option(
      '--port <port>',
      'the loopback port (default: ui.port in cms-sync.yaml, 0 = a free one)',
      portNumber,
    )
    .action(async (opts: { port?: number }, cmd: Command) => {
      const globals = globalOptions(cmd)
      const ws = await openWorkspace(io, cmd)
      const { workspacePage } = await import('../page-session.js')
      const page = await workspacePage(io, cmd, ws, opts.port ?? ws.config.ui.port)
      if (globals.json) io.stdout.write(`${JSON.stringify({ event: 'page', url: page.url })}\n`)
      else
        io.stdout.write(
          `the page: ${page.url}\n  (open it in a browser; the address is this run's key, keep it to yourself; Ctrl-C stops)\n`,
        )
      // The status is read again every poll interval and pushed when it changed.
      const timer = setInterval(() => void page.refresh(), ws.config.watch.pollSeconds * 1000)
      try {
        await io.stopSignal
      } finally {
        clearInterval(timer)
        await page.close()
      }
      setExit(ExitCode.ok)
    })
}
