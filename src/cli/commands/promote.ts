// `cms-sync promote <paths...> [--dry-run]`: sends items up to the parent project the server
// inherits from. The rules (what is refused and why) live in engine/promote.ts.

import type { Command } from 'commander'
import { CliError, ExitCode } from '../../errors/exit-codes.js'
import { printable } from '../../util/printable.js'
import { pc } from '../colors.js'
import { globalOptions, printJson } from '../context.js'
import { withEngine } from '../engine-session.js'
import type { CliIo } from '../io.js'

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('promote')
    .description('Send items up to the parent project this project inherits from (P/<kind>/push/:id)')
    .argument('<paths...>', 'files or folders to promote; each must be in sync first')
    .option('--dry-run', 'say what would be promoted, change nothing')
    .action(async (paths: string[], opts: { dryRun?: boolean }, cmd: Command) => {
      const globals = globalOptions(cmd)
      const { planRun } = await import('../../engine/plan-and-apply.js')
      const { promote, promoteSelection } = await import('../../engine/promote.js')
      const { parentSettings } = await import('../../remote/server-group.js')
      await withEngine(io, cmd, paths, { lock: !opts.dryRun }, async ({ deps, scope, client }) => {
        const planned = await planRun(deps, {})
        const items = promoteSelection(planned, scope)
        if (items.length === 0)
          throw new CliError(`nothing to promote: no synced item under ${paths.join(', ')}`, ExitCode.usage)
        const settings = await parentSettings(client)
        const noParent =
          settings && !settings.enabled
            ? `project "${client.target.project}" inherits from no parent (sync is off in its settings); there is nothing to promote to`
            : undefined
        const outcome = await promote(client, items, {
          dryRun: !!opts.dryRun,
          ...(noParent ? { noParent } : {}),
        })
        if (outcome.failed.length > 0) setExit(ExitCode.failed)
        if (globals.json) {
          printJson(io, opts.dryRun ? { dryRun: true, ...outcome } : outcome)
          return
        }
        if (globals.quiet) return
        for (const item of outcome.applied)
          io.stdout.write(`  ${pc.green('promote'.padEnd(13))} ${printable(item.path)}\n`)
        for (const item of outcome.failed)
          io.stdout.write(
            `  ${pc.red('not promoted'.padEnd(13))} ${printable(item.path)}\n      ${pc.red(printable(item.error ?? ''))}\n`,
          )
        const verb = opts.dryRun ? 'would promote' : 'promoted'
        io.stdout.write(
          `promote${opts.dryRun ? ' (dry run)' : ''}: ${verb} ${outcome.applied.length}, ${outcome.failed.length} not promoted\n`,
        )
      })
    })
}
