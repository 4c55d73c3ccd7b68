// `cms-sync status [paths...]`: drift both ways, from the one plan. Read-only (no lock, no
// writes); an unchanged workspace costs the listing requests and a stat per file. It tells CI
// the truth (design.md): exit 1 when an item would fail (a file the run would refuse, a server
// item no file can hold), 3 when conflicts remain, and with --exit-code 6 when anything is to sync.

import type { Command } from 'commander'
import { ExitCode } from '../../errors/exit-codes.js'
import { printable } from '../../util/printable.js'
import { globalOptions, printJson } from '../context.js'
import { withEngine } from '../engine-session.js'
import type { CliIo } from '../io.js'
import { itemLine } from '../run-report.js'

/** status --exit-code: the workspace and the server differ (for CI gates). */
export const PENDING_EXIT = 6

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('status')
    .description('Show what changed locally and on the server since the last sync')
    .argument('[paths...]', 'only these files or folders')
    .option('--exit-code', `also exit ${PENDING_EXIT} when anything is to sync (for CI gates)`)
    .option(
      '--anonymous',
      "read without any token (a pull request's CI check, on a server that allows anonymous reads); whether a token may push is then not checked",
    )
    .action(async (paths: string[], opts: { exitCode?: boolean; anonymous?: boolean }, cmd: Command) => {
      const globals = globalOptions(cmd)
      const model = import('../status-model.js')
      await withEngine(io, cmd, paths, { lock: false }, async (session) => {
        const { deps } = session
        const [
          { readStatus, statusDocument },
          { describePause, PAUSE_LIFT },
          { describeHeld, describeHeldCommands },
        ] = await Promise.all([model, import('../../watch/mass-change.js'), import('../../engine/held.js')])
        const read = await readStatus(session, { anonymous: opts.anonymous === true })
        const { changes, problems, inherited, scheduled, watchPaused, held, tokenRefused } = read
        const clean = changes.length === 0 && problems.length === 0
        const failing = changes.filter((c) => c.error !== undefined).length + problems.length
        const conflicts = changes.filter((c) => c.action === 'conflict').length
        // A refused token is the first thing to fix (exit 2), whatever the plan says.
        setExit(
          tokenRefused !== undefined
            ? ExitCode.usage
            : failing > 0
              ? ExitCode.failed
              : conflicts > 0
                ? ExitCode.conflicts
                : opts.exitCode && !clean
                  ? PENDING_EXIT
                  : ExitCode.ok,
        )
        if (globals.json) {
          printJson(io, statusDocument(deps.target, read))
          return
        }
        if (tokenRefused !== undefined) io.stderr.write(`cms-sync: ${tokenRefused}\n`)
        if (opts.anonymous)
          io.stderr.write(
            'cms-sync: read without a token (--anonymous): whether a push would be allowed was not checked\n',
          )
        if (globals.quiet) return
        if (watchPaused) io.stdout.write(`${describePause(watchPaused)}\n  ${PAUSE_LIFT}\n`)
        // The pause was told above, with its own words.
        for (const h of held.filter((h) => h.action !== 'push'))
          io.stdout.write(`${printable(describeHeld(h))}\n  ${printable(describeHeldCommands(h))}\n`)
        for (const change of changes) {
          const line = itemLine({
            ...change,
            ...(change.error ? { action: `${change.action} (fails)` } : {}),
          })
          io.stdout.write(`${line}${change.inherited ? '  [inherited from the parent project]' : ''}\n`)
        }
        for (const p of problems)
          io.stdout.write(
            `  unusable      ${p.path ? printable(p.path) : `${p.kind} ${JSON.stringify(p.id)} on the server`}: ${printable(p.problems.join('; '))}\n`,
          )
        if (inherited.length > 0)
          io.stdout.write(
            `${inherited.length} item${inherited.length === 1 ? '' : 's'} inherited from the parent project (locked on the server; an edit makes a local copy): ${printable(inherited.slice(0, 10).join(', '))}${inherited.length > 10 ? `, and ${inherited.length - 10} more` : ''}\n`,
          )
        if (scheduled.length > 0) {
          io.stdout.write('scheduled:\n')
          for (const s of scheduled)
            io.stdout.write(`  ${s.date}  ${s.type.padEnd(9)} ${printable(s.path)}\n`)
        }
        const why = [
          ...(failing > 0 ? [`${failing} would fail`] : []),
          ...(conflicts > 0 ? [`${conflicts} in conflict`] : []),
        ]
        io.stdout.write(
          clean
            ? 'clean: the workspace and the server agree\n'
            : `${changes.length + problems.length} to sync${why.length ? ` (${why.join(', ')})` : ''}\n`,
        )
      })
    })
}
