// `cms-sync status [paths...]`: drift both ways, from the one plan. Read-only (no lock, no
// writes); an unchanged workspace costs the listing requests and a stat per file.

import type { Command } from 'commander'
import { globalOptions, printJson } from '../context.js'
import { withEngine } from '../engine-session.js'
import type { CliIo } from '../io.js'
import { itemLine } from '../run-report.js'

export function register(program: Command, io: CliIo): void {
  program
    .command('status')
    .description('Show what changed locally and on the server since the last sync')
    .argument('[paths...]', 'only these files or folders')
    .action(async (paths: string[], _opts: object, cmd: Command) => {
      const globals = globalOptions(cmd)
      // Loaded while the workspace and its config are opened.
      const engine = Promise.all([
        import('../../engine/run.js'),
        import('../../engine/plan.js'),
        import('../scheduled.js'),
        import('../../watch/mass-change.js'),
      ])
      await withEngine(io, cmd, paths, { lock: false }, async ({ deps, scope, client, ws }) => {
        const [
          { planRun, inScope },
          { changesOf },
          { upcomingSchedule },
          { readPause, describePause, PAUSE_LIFT },
        ] = await engine
        // A paused watcher pushes nothing until told: the first thing to know about this workspace.
        const watchPaused = await readPause(ws.root)
        const planned = await planRun(deps, {})
        await planned.media?.dispose()
        const changes = changesOf(planned.plan)
          .filter((item) => inScope(item.path, scope))
          .map(({ kind, id, path, local, remote, action, from, inherited, leaves, reason }) => {
            const problems = planned.local.get(path)?.problems
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
            }
          })
        // Items the server lists from the parent project it inherits from (locked there).
        const inherited = [...planned.remote.values()]
          .filter((entry) => entry.inherited && inScope(entry.path, scope))
          .map((entry) => entry.path)
          .sort()
        const scheduled = await upcomingSchedule(client, ws.root, planned, scope)
        const problems = planned.scanProblems.filter((p) => inScope(p.path, scope))
        const clean = changes.length === 0 && problems.length === 0
        if (globals.json) {
          const { server, project, environment } = deps.target
          printJson(io, {
            server,
            project,
            environment,
            clean,
            changes,
            ...(problems.length ? { problems } : {}),
            ...(inherited.length ? { inherited } : {}),
            ...(scheduled.length ? { scheduled } : {}),
            ...(watchPaused ? { watchPaused } : {}),
          })
          return
        }
        if (globals.quiet) return
        if (watchPaused) io.stdout.write(`${describePause(watchPaused)}\n  ${PAUSE_LIFT}\n`)
        for (const change of changes) {
          const line = itemLine({ ...change, error: change.problems?.join('; ') })
          io.stdout.write(`${line}${change.inherited ? '  [inherited from the parent project]' : ''}\n`)
        }
        for (const p of problems) io.stdout.write(`  unusable      ${p.path}: ${p.problems.join('; ')}\n`)
        if (inherited.length > 0)
          io.stdout.write(
            `${inherited.length} item${inherited.length === 1 ? '' : 's'} inherited from the parent project (locked on the server; an edit makes a local copy): ${inherited.slice(0, 10).join(', ')}${inherited.length > 10 ? `, and ${inherited.length - 10} more` : ''}\n`,
          )
        if (scheduled.length > 0) {
          io.stdout.write('scheduled:\n')
          for (const s of scheduled) io.stdout.write(`  ${s.date}  ${s.type.padEnd(9)} ${s.path}\n`)
        }
        io.stdout.write(
          clean
            ? 'clean: the workspace and the server agree\n'
            : `${changes.length + problems.length} to sync\n`,
        )
      })
    })
}
