// `cms-sync status [paths...]`: drift both ways, from the one plan. Read-only (no lock, no
// writes); an unchanged workspace costs the listing requests and a stat per file. It tells CI
// the truth (design.md): exit 1 when an item would fail (a file the run would refuse, a server
// item no file can hold), 3 when conflicts remain, and with --exit-code 6 when anything is to sync.

import type { Command } from 'commander'
import { ExitCode } from '../../errors/exit-codes.js'
import { RemoteError } from '../../remote/errors.js'
import type { RemoteClient } from '../../remote/index.js'
import { globalOptions, printJson } from '../context.js'
import { withEngine } from '../engine-session.js'
import type { CliIo } from '../io.js'
import { itemLine } from '../run-report.js'

/**
 * Why the server refuses the token, or undefined when it takes it. Upstream answers every read
 * without a token, so a status made only of listings would say "clean" for a token that cannot
 * push anything.
 */
async function tokenRefusal(client: RemoteClient): Promise<string | undefined> {
  try {
    await client.checkToken()
    return undefined
  } catch (error) {
    if (error instanceof RemoteError && error.code === 'unauthorized')
      return `${error.message.replace(/; run .*$/, '')}: reads work, but a push or sync would be refused; run \`cms-sync login\` or set CMS_SYNC_TOKEN`
    throw error
  }
}
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
      '--checksum',
      "read the server's media bytes the listing cannot vouch for (upstream has no media dates) and compare them",
    )
    .action(async (paths: string[], opts: { exitCode?: boolean; checksum?: boolean }, cmd: Command) => {
      const globals = globalOptions(cmd)
      // Loaded while the workspace and its config are opened.
      const engine = Promise.all([
        import('../../engine/run.js'),
        import('../../engine/plan.js'),
        import('../scheduled.js'),
        import('../../engine/predict.js'),
        import('../../watch/mass-change.js'),
        import('../../state/recent-pushes.js'),
        import('../../engine/own-pushes.js'),
        import('../../engine/media/media-verified.js'),
      ])
      const checksum = opts.checksum === true
      await withEngine(io, cmd, paths, { lock: false, checksum }, async ({ deps, scope, client, ws }) => {
        const [
          { planRun, inScope, checkScope },
          { changesOf },
          { upcomingSchedule },
          { predictFailures },
          { readPause, describePause, PAUSE_LIFT },
          { RecentPushes },
          { revertedLeaves, describeReverted },
          { unverifiedMedia },
        ] = await engine
        // Asked for alongside the listings, so the check costs no extra wait.
        const refusal = tokenRefusal(client)
        refusal.catch(() => {})
        // A paused watcher pushes nothing until told: the first thing to know about this workspace.
        const watchPaused = await readPause(ws.root)
        const planned = await planRun(deps, {})
        const tokenRefused = await refusal
        await planned.media?.dispose()
        checkScope(planned, scope)
        const pending = changesOf(planned.plan).filter((item) => inScope(item.path, scope))
        // What the run would refuse: the same checks as `--dry-run` and the executor.
        const failures = await predictFailures(deps, planned, pending)
        // A pull that would put back leaves of our own recent push (an editor's stale save).
        const recent = await RecentPushes.load(ws.root)
        const revertedBy = (path: string, kind: string) => {
          const push = recent.get(path)
          const entry = planned.remote.get(path)
          const codec = deps.codecs.find((c) => c.kind === kind)
          if (!push || !entry || !codec) return []
          return revertedLeaves(push, codec.toFile(entry.object))
        }
        const changes = pending.map(
          ({ kind, id, path, local, remote, action, from, inherited, leaves, reason }) => {
            const problems = planned.local.get(path)?.problems
            const error = failures.get(path)
            const reverted = action === 'pull' || action === 'merge' ? revertedBy(path, kind) : []
            return {
              kind,
              id,
              path,
              local,
              remote,
              action,
              ...(from ? { from } : {}),
              ...(inherited ? { inherited } : {}),
              ...(problems ? { problems } : {}),
              ...(leaves?.length ? { leaves } : {}),
              ...(reason ? { reason } : {}),
              ...(error !== undefined ? { error } : {}),
              ...(reverted.length ? { reverted } : {}),
            }
          },
        )
        // Items the server lists from the parent project it inherits from (locked there).
        const inherited = [...planned.remote.values()]
          .filter((entry) => entry.inherited && inScope(entry.path, scope))
          .map((entry) => entry.path)
          .sort()
        const scheduled = await upcomingSchedule(client, ws.root, planned, scope)
        // The listings the state was found to match: the next status answered 304 parses none.
        await planned.markListings?.()
        // Files that stand for no item, and server items no file can hold (a pull fails on them).
        const problems: { kind: string; path?: string; id?: string; problems: string[] }[] = [
          ...planned.scanProblems.filter((p) => inScope(p.path, scope)),
          ...(scope.length === 0
            ? planned.remoteProblems.map((p) => ({ kind: p.kind, id: p.id, problems: [p.problem] }))
            : []),
        ]
        // Files in the kind folders that no run reads (a subfolder, a name without .json).
        const notSynced = (planned.strays ?? []).filter((stray) =>
          inScope(stray.path.replace(/\/$/, ''), scope),
        )
        // Media bytes nothing compared in this run (upstream lists no dates): never called "agree".
        const changed = new Set(changes.map((c) => c.path))
        const unverified = unverifiedMedia(
          planned.store,
          planned.media,
          (path) => !inScope(path, scope) || changed.has(path),
        )
        // Our pushes an editor's stale save put back, already pulled: told until pushed again.
        const reverted = recent
          .reverted()
          .filter(([path]) => inScope(path, scope))
          .map(([path, push]) => ({
            path,
            kind: push.kind,
            id: push.id,
            at: push.reverted.at,
            leaves: push.reverted.leaves,
            ...(push.reverted.trash ? { trash: push.reverted.trash } : {}),
          }))
        // A refused token is not clean, whatever the listings say: nothing could be pushed.
        const clean = changes.length === 0 && problems.length === 0 && tokenRefused === undefined
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
          const { server, project, environment } = deps.target
          printJson(io, {
            server,
            project,
            environment,
            clean,
            changes,
            ...(problems.length ? { problems } : {}),
            ...(notSynced.length ? { notSynced } : {}),
            ...(reverted.length ? { reverted } : {}),
            ...(unverified.length ? { unverified } : {}),
            ...(inherited.length ? { inherited } : {}),
            ...(scheduled.length ? { scheduled } : {}),
            ...(watchPaused ? { watchPaused } : {}),
            ...(tokenRefused === undefined ? {} : { token: { refused: tokenRefused } }),
          })
          return
        }
        if (tokenRefused !== undefined) io.stderr.write(`cms-sync: ${tokenRefused}\n`)
        if (globals.quiet) return
        if (watchPaused) io.stdout.write(`${describePause(watchPaused)}\n  ${PAUSE_LIFT}\n`)
        for (const change of changes) {
          const line = itemLine({
            ...change,
            ...(change.error ? { action: `${change.action} (fails)` } : {}),
          })
          io.stdout.write(`${line}${change.inherited ? '  [inherited from the parent project]' : ''}\n`)
        }
        for (const p of problems)
          io.stdout.write(
            `  unusable      ${p.path ?? `${p.kind} ${JSON.stringify(p.id)} on the server`}: ${p.problems.join('; ')}\n`,
          )
        for (const stray of notSynced) io.stdout.write(`  not synced    ${stray.path}: ${stray.reason}\n`)
        if (unverified.length > 0) io.stdout.write(`${unverifiedLine(unverified)}\n`)
        for (const r of reverted)
          io.stdout.write(
            `  reverted      ${r.path}: the server put back ${describeReverted(r.leaves)} (pulled ${r.at}); ours is in ${r.trash ?? '.cms-sync/trash/'}; \`cms-sync push --again ${r.path}\` sends it again\n`,
          )
        if (inherited.length > 0)
          io.stdout.write(
            `${inherited.length} item${inherited.length === 1 ? '' : 's'} inherited from the parent project (locked on the server; an edit makes a local copy): ${inherited.slice(0, 10).join(', ')}${inherited.length > 10 ? `, and ${inherited.length - 10} more` : ''}\n`,
          )
        if (scheduled.length > 0) {
          io.stdout.write('scheduled:\n')
          for (const s of scheduled) io.stdout.write(`  ${s.date}  ${s.type.padEnd(9)} ${s.path}\n`)
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
    })
}
