// `cms-sync restore <paths...>`: drops local edits; each named file gets the server copy and
// the dropped version is kept in .cms-sync/trash/ (design.md). The way back from an edit that
// is not wanted, without `git checkout` (which knows nothing of the server).

import type { Command } from 'commander'
import { printable } from '../../util/printable.js'
import { globalOptions } from '../context.js'
import { withEngine } from '../engine-session.js'
import type { CliIo } from '../io.js'
import { exitCodeFor, printOutcome, progressFor } from '../run-report.js'
import { viaDaemon } from '../via-daemon.js'

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('restore')
    .description('Drop local edits: each file gets the server copy; the edit is kept in .cms-sync/trash/')
    .argument('<paths...>', 'the files or folders to restore')
    .option('--dry-run', 'say what would be restored, change nothing')
    .action(async (paths: string[], opts: { dryRun?: boolean }, cmd: Command) => {
      const globals = globalOptions(cmd)
      const nothing = () => {
        if (!globals.json && !globals.quiet)
          io.stderr.write(
            `cms-sync: nothing to restore in ${printable(paths.join(', '))}: it has no local edit\n`,
          )
        if (globals.json) io.stdout.write(`${JSON.stringify({ applied: [], conflicts: [], failed: [] })}\n`)
      }
      // While watch runs (a paused one holds the edits a restore is for), the daemon does it.
      const fromDaemon = opts.dryRun
        ? undefined
        : await viaDaemon(io, cmd, paths, { command: 'restore', keep: 'remote' })
      if (fromDaemon) {
        if (fromDaemon.applied.length + fromDaemon.conflicts.length + fromDaemon.failed.length === 0)
          return nothing()
        printOutcome(io, globals, 'restore', fromDaemon, false)
        return setExit(exitCodeFor(fromDaemon))
      }
      const { restoreEdits } = await import('../../engine/resolve-restore-release.js')
      await withEngine(io, cmd, paths, { lock: !opts.dryRun }, async ({ deps, scope }) => {
        const progress = progressFor(io, globals)
        const outcome = await restoreEdits(deps, scope, {
          dryRun: opts.dryRun === true,
          ...(progress ? { onProgress: progress } : {}),
        })
        if (outcome.applied.length + outcome.conflicts.length + outcome.failed.length === 0) return nothing()
        printOutcome(io, globals, 'restore', outcome, opts.dryRun === true)
        setExit(exitCodeFor(outcome))
      })
    })
}
