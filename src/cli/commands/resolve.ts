// `cms-sync resolve <paths...> --keep local|remote`: settles conflicts. The plan is made with
// --prefer set to the kept side, and only the conflicts it settled are carried out; the losing
// version goes to .cms-sync/trash/. An item changed on both sides is settled leaf by leaf: its
// conflicting leaves take the kept side and every other edit of both sides is merged. A path
// may name single leaves as `<file>#<JSON Pointer>` (`content/home.json#/properties/title/de`):
// only those are settled, and the item stays a conflict while other leaves still differ. A group
// is a folder (a kind's folder settles every conflict of that kind) or a pattern
// (`'content/blog/*'`, quoted so the shell leaves it): every conflict it matches. A deletion (one
// a guard holds) is settled too: `--keep` the side that deleted it carries it out, the other side
// brings the item back. The engine call is src/engine/resolve-restore-release.ts, shared with the
// daemon and the local page.
// While `cms-sync watch` holds the workspace, the daemon carries the resolve out on its own
// state (src/watch/requests.ts): one command either way.

import { type Command, Option } from 'commander'
import type { Outcome } from '../../engine/outcome.js'
import type { Side } from '../../engine/plan.js'
import { CliError, ExitCode } from '../../errors/exit-codes.js'
import { globalOptions } from '../context.js'
import { withEngine } from '../engine-session.js'
import type { CliIo } from '../io.js'
import { exitCodeFor, printOutcome } from '../run-report.js'
import { viaDaemon } from '../via-daemon.js'

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('resolve')
    .description(
      'Settle conflicts by keeping one side (whole items, or single leaves as <file>#<pointer>); the other is kept in .cms-sync/trash/',
    )
    .argument(
      '<paths...>',
      "the conflicting files, folders (a kind's folder: all of that kind) or patterns ('content/blog/*'), or leaves as <file>#/json/pointer",
    )
    .addOption(
      new Option('--keep <side>', 'the side to keep').choices(['local', 'remote']).makeOptionMandatory(),
    )
    .addHelpText(
      'after',
      '\nA deletion (one a guard holds, see `cms-sync status`) is settled too: keeping the side that\ndeleted it carries it out, keeping the other brings the item back there.\nWorks while `cms-sync watch` runs: the daemon carries the resolve out.\n',
    )
    .action(async (paths: string[], opts: { keep: Side }, cmd: Command) => {
      const globals = globalOptions(cmd)
      const { splitLeaf } = await import('../../engine/resolve-restore-release.js')
      const args = paths.map(splitLeaf)
      const report = (outcome: Outcome) => {
        if (outcome.applied.length + outcome.conflicts.length + outcome.failed.length === 0) {
          throw new CliError(`no conflicts in ${paths.join(', ')}`, ExitCode.usage)
        }
        printOutcome(io, globals, 'resolve', outcome, false)
        setExit(exitCodeFor(outcome))
      }
      // While watch runs, the daemon settles them on its own state (leaves too).
      const fromDaemon = await viaDaemon(
        io,
        cmd,
        args.filter((a) => a.pointer === undefined).map((a) => a.file),
        { command: 'resolve', keep: opts.keep },
        args.filter((a) => a.pointer !== undefined).map((a) => ({ file: a.file, pointer: a.pointer! })),
      )
      if (fromDaemon) return report(fromDaemon)
      const { resolveConflicts } = await import('../../engine/resolve-restore-release.js')
      await withEngine(
        io,
        cmd,
        args.map((a) => a.file),
        { lock: true },
        async ({ deps, scope }) => {
          // The leaves named per item (a file named whole as well settles all of it).
          const leaves = new Map<string, string[]>()
          const whole = new Set(scope.filter((_, i) => args[i]!.pointer === undefined))
          for (const [i, arg] of args.entries()) {
            if (arg.pointer === undefined || whole.has(scope[i]!)) continue
            leaves.set(scope[i]!, [...(leaves.get(scope[i]!) ?? []), arg.pointer])
          }
          report(await resolveConflicts(deps, { scope: [...whole], keep: opts.keep, leaves }))
        },
      )
    })
}
