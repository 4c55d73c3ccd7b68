// `cms-sync resolve <paths...> --keep local|remote`: settles conflicts. The plan is made with
// --prefer set to the kept side, and only the conflicts it settled are carried out; the losing
// version goes to .cms-sync/trash/. An item changed on both sides is settled leaf by leaf: its
// conflicting leaves take the kept side and every other edit of both sides is merged. A path
// may name single leaves as `<file>#<JSON Pointer>` (`content/home.json#/properties/title/de`):
// only those are settled, and the item stays a conflict while other leaves still differ. A
// deletion (one a guard holds) is settled too: `--keep` the side that deleted it carries it out,
// the other side brings the item back.
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

/** `file#/pointer` -> the file and the pointer (a JSON Pointer: empty or starting with `/`). */
function splitLeaf(arg: string): { file: string; pointer?: string } {
  const hash = arg.indexOf('#')
  if (hash < 0) return { file: arg }
  const pointer = arg.slice(hash + 1)
  if (pointer !== '' && !pointer.startsWith('/'))
    throw new CliError(
      `${arg}: a leaf is named by a JSON Pointer after '#', e.g. content/home.json#/properties/title/de`,
      ExitCode.usage,
    )
  return { file: arg.slice(0, hash), pointer }
}

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('resolve')
    .description(
      'Settle conflicts by keeping one side (whole items, or single leaves as <file>#<pointer>); the other is kept in .cms-sync/trash/',
    )
    .argument('<paths...>', 'the conflicting files or folders, or leaves as <file>#/json/pointer')
    .addOption(
      new Option('--keep <side>', 'the side to keep').choices(['local', 'remote']).makeOptionMandatory(),
    )
    .addHelpText(
      'after',
      '\nA deletion (one a guard holds, see `cms-sync status`) is settled too: keeping the side that\ndeleted it carries it out, keeping the other brings the item back there.\nWorks while `cms-sync watch` runs: the daemon carries the resolve out.\n',
    )
    .action(async (paths: string[], opts: { keep: Side }, cmd: Command) => {
      const globals = globalOptions(cmd)
      const args = paths.map(splitLeaf)
      const report = (outcome: Outcome) => {
        if (outcome.applied.length + outcome.conflicts.length + outcome.failed.length === 0) {
          throw new CliError(`no conflicts in ${paths.join(', ')}`, ExitCode.usage)
        }
        printOutcome(io, globals, 'resolve', outcome, false)
        setExit(exitCodeFor(outcome))
      }
      // Whole items while watch runs: the daemon settles them (leaves are settled here only).
      if (args.every((a) => a.pointer === undefined)) {
        const fromDaemon = await viaDaemon(io, cmd, paths, { command: 'resolve', keep: opts.keep })
        if (fromDaemon) return report(fromDaemon)
      }
      const [{ applyRun, planRun, SELECT }, { settleDeletions }] = await Promise.all([
        import('../../engine/run.js'),
        import('../../engine/settle-deletions.js'),
      ])
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
          const planned = await planRun(deps, { prefer: opts.keep, ...(leaves.size ? { leaves } : {}) })
          // A deletion (one a guard holds) is settled the same way: kept, or undone.
          const wholeItems = scope.filter((_, i) => args[i]!.pointer === undefined)
          if (wholeItems.length > 0) settleDeletions(planned.plan.items, wholeItems, opts.keep)
          for (const [file, pointers] of leaves) {
            const item = planned.plan.items.find((i) => i.path === file)
            if (item?.settledFor !== undefined) continue
            const open = item?.leaves?.map((leaf) => leaf.path || '(the document)').join(', ')
            throw new CliError(
              `${file}: no conflicting leaf at ${pointers.join(', ')}${open ? ` (its conflicting leaves: ${open})` : item?.reason ? ` (${item.reason})` : ''}`,
              ExitCode.usage,
            )
          }
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
        },
      )
    })
}
