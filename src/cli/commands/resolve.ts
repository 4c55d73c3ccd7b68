// `cms-sync resolve <paths...> --keep local|remote`: settles conflicts. The plan is made with
// --prefer set to the kept side, and only the conflicts it settled are carried out; the losing
// version goes to .cms-sync/trash/. While `cms-sync watch` holds the workspace, the daemon
// carries the resolve out on its own state (src/watch/requests.ts): one command either way.

import { type Command, Option } from 'commander'
import type { Outcome } from '../../engine/outcome.js'
import type { Side } from '../../engine/plan.js'
import { globalOptions, openWorkspace } from '../context.js'
import { scopeOf, withEngine } from '../engine-session.js'
import { CliError, ExitCode } from '../exit-codes.js'
import type { CliIo } from '../io.js'
import { exitCodeFor, printOutcome } from '../run-report.js'

/** The outcome from a running `watch` daemon, or undefined when none holds the workspace. */
async function viaDaemon(io: CliIo, cmd: Command, paths: string[], keep: Side): Promise<Outcome | undefined> {
  const ws = await openWorkspace(io, cmd)
  const { lockHolder } = await import('../../state/lock.js')
  const holder = await lockHolder(ws.root)
  if (holder?.command !== 'watch') return undefined
  const scope = scopeOf(ws.globals.dir ? ws.root : io.cwd, ws.root, paths)
  const { askDaemon } = await import('../../watch/requests.js')
  const reply = await askDaemon(ws.root, holder.pid, { command: 'resolve', scope, keep })
  if (reply === undefined) return undefined // the daemon stopped meanwhile: run here
  if ('error' in reply) throw new CliError(reply.error.message, reply.error.exitCode as ExitCode)
  return reply.outcome
}

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
      const fromDaemon = await viaDaemon(io, cmd, paths, opts.keep)
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
