// `cms-sync resolve <paths...> --keep local|remote`: settles conflicts. The plan is made with
// --prefer set to the kept side, and only the conflicts it settled are carried out; the losing
// version goes to .cms-sync/trash/.

import { type Command, Option } from 'commander'
import type { Side } from '../../engine/plan.js'
import { globalOptions } from '../context.js'
import { withEngine } from '../engine-session.js'
import { CliError, ExitCode } from '../exit-codes.js'
import type { CliIo } from '../io.js'
import { exitCodeFor, printOutcome } from '../run-report.js'

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('resolve')
    .description('Settle conflicts by keeping one side; the other is kept in .cms-sync/trash/')
    .argument('<paths...>', 'the conflicting files or folders')
    .addOption(
      new Option('--keep <side>', 'the side to keep').choices(['local', 'remote']).makeOptionMandatory(),
    )
    .action(async (paths: string[], opts: { keep: Side }, cmd: Command) => {
      const globals = globalOptions(cmd)
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
        if (outcome.applied.length + outcome.conflicts.length + outcome.failed.length === 0) {
          throw new CliError(`no conflicts in ${paths.join(', ')}`, ExitCode.usage)
        }
        printOutcome(io, globals, 'resolve', outcome, false)
        setExit(exitCodeFor(outcome))
      })
    })
}
