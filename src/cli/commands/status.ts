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

/**
 * The media whose bytes were not compared with the server's, and since when (the oldest): the
 * upstream server lists media without dates or sizes, so only reading them shows a replacement.
 */
function unverifiedLine(unverified: readonly { verifiedAt: string | null }[]): string {
  const never = unverified.filter((u) => u.verifiedAt === null).length
  const oldest = unverified.find((u) => u.verifiedAt !== null)?.verifiedAt
  const since = [
    ...(oldest ? [`last compared ${oldest} at the oldest`] : []),
    ...(never > 0 ? [`${never} never compared here`] : []),
  ].join(', ')
  const n = unverified.length
  return `  unverified    ${n} media item${n === 1 ? '' : 's'}: the server's bytes were not compared (${since}); the server gives no dates to tell a replacement by; \`cms-sync status --checksum\` compares them, \`cms-sync watch\` re-reads them within watch.verifyMedia`
}

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
    .option(
      '--checksum',
      "read the server's media bytes the listing cannot vouch for (upstream has no media dates) and compare them",
    )
    .action(
      async (
        paths: string[],
        opts: { exitCode?: boolean; anonymous?: boolean; checksum?: boolean },
        cmd: Command,
      ) => {
        const globals = globalOptions(cmd)
        const model = import('../status-model.js')
        const checksum = opts.checksum === true
        await withEngine(io, cmd, paths, { lock: false, checksum }, async (session) => {
          const { deps } = session
          const [
            { readStatus, statusDocument, isClean },
            { describePause, PAUSE_LIFT },
            { describeHeld, describeHeldCommands },
            { describeReverted },
          ] = await Promise.all([
            model,
            import('../../watch/mass-change.js'),
            import('../../engine/held.js'),
            import('../../engine/own-pushes.js'),
          ])
          const read = await readStatus(session, { anonymous: opts.anonymous === true })
          const { changes, problems, inherited, scheduled, watchPaused, held, tokenRefused } = read
          const { notSynced, reverted, unverified } = read
          // A refused token is not clean, whatever the listings say: nothing could be pushed.
          const clean = isClean(read)
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
          for (const stray of notSynced)
            io.stdout.write(`  not synced    ${printable(stray.path)}: ${printable(stray.reason)}\n`)
          if (unverified.length > 0) io.stdout.write(`${unverifiedLine(unverified)}\n`)
          for (const r of reverted)
            io.stdout.write(
              `${printable(
                `  reverted      ${r.path}: the server put back ${describeReverted(r.leaves)} (pulled ${r.at}); ours is in ${r.trash ?? '.cms-sync/trash/'}; \`cms-sync push --again ${r.path}\` sends it again`,
              )}\n`,
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
          // "clean" only where everything was compared: what was not is said instead.
          const unchecked = [
            ...(tokenRefused !== undefined ? ['the token is refused (above): nothing can be pushed'] : []),
            ...(notSynced.length > 0
              ? [`${notSynced.length} file${notSynced.length === 1 ? ' is' : 's are'} not synced (above)`]
              : []),
            ...(reverted.length > 0
              ? [
                  `${reverted.length} of our pushes ${reverted.length === 1 ? 'was' : 'were'} reverted on the server (above)`,
                ]
              : []),
            ...(unverified.length > 0
              ? [
                  `the bytes of ${unverified.length} media item${unverified.length === 1 ? ' were' : 's were'} not compared (above)`,
                ]
              : []),
          ]
          io.stdout.write(
            changes.length + problems.length > 0
              ? `${changes.length + problems.length} to sync${why.length ? ` (${why.join(', ')})` : ''}\n`
              : unchecked.length > 0
                ? `nothing to sync in what was compared, but ${unchecked.join('; ')}\n`
                : 'clean: the workspace and the server agree\n',
          )
        })
      },
    )
}
