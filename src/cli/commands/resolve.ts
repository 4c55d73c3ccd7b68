// `cms-sync resolve <paths...> --keep local|remote`: settles conflicts. The plan is made with
// --prefer set to the kept side, and only the conflicts it settled are carried out; the losing
// version goes to .cms-sync/trash/. While `cms-sync watch` holds the workspace, the daemon
// carries the resolve out on its own state (src/watch/requests.ts): one command either way.

import { type Command, Option } from 'commander'
import type { Outcome } from '../../engine/outcome.js'
import type { Side } from '../../engine/plan.js'
import { globalOptions } from '../context.js'
import { withEngine } from '../engine-session.js'
import { CliError, ExitCode } from '../exit-codes.js'
import type { CliIo } from '../io.js'
import { exitCodeFor, printOutcome } from '../run-report.js'
import { viaDaemon } from '../via-daemon.js'

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('resolve')
    .description('Settle conflicts by keeping one side; the other is kept in .cms-sync/trash/')
    .argument('<paths...>', 'the conflicting files or folders')
    .addOption(
      new Option('--keep <side>', 'the side to keep').choices(['local', 'remote']).makeOptionMandatory(),
    )
    .addHelpText(
      'after',
      '\nWorks while `cms-sync watch` runs: the daemon carries the resolve out.\n\nExamples:\n  cms-sync diff content/home.json                    # see both sides first\n  cms-sync resolve content/home.json --keep local    # the server gets the local file\n  cms-sync resolve content --keep remote             # every conflict under content/\n',
    )
    .action(async (paths: string[], opts: { keep: Side }, cmd: Command) => {
      const globals = globalOptions(cmd)
      const report = (outcome: Outcome) => {
        if (outcome.applied.length + outcome.conflicts.length + outcome.failed.length === 0) {
          throw new CliError(`no conflicts in ${paths.join(', ')}`, ExitCode.usage)
        }
        printOutcome(io, globals, 'resolve', outcome, false)
        setExit(exitCodeFor(outcome))
      }
      const fromDaemon = await viaDaemon(io, cmd, paths, { command: 'resolve', keep: opts.keep })
      if (fromDaemon) return report(fromDaemon)
      const { applyRun, planRun, SELECT } = await import('../../engine/run.js')
      await withEngine(io, cmd, paths, { lock: true }, async ({ deps, scope }) => {
        const planned = await planRun(deps, { prefer: opts.keep })
        const outcome = await applyRun(deps, planned, {
          select: SELECT.resolve,
          scope,
          dryRun: false,
          // Keeping a deletion is the user's explicit choice for these paths.
          allowDeletes: true,
          reportScanProblems: false,
          reportRemoteProblems: false,
        })
        report(outcome)
      })
    })
}
