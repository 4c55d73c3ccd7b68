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
      const { planRun, inScope } = await import('../../engine/run.js')
      const { changesOf } = await import('../../engine/plan.js')
      await withEngine(io, cmd, paths, { lock: false }, async ({ deps, scope }) => {
        const planned = await planRun(deps, {})
        await planned.media?.dispose()
        const changes = changesOf(planned.plan)
          .filter((item) => inScope(item.path, scope))
          .map(({ kind, id, path, local, remote, action, from }) => {
            const problems = planned.local.get(path)?.problems
            return {
              kind,
              id,
              path,
              local,
              remote,
              action,
              ...(from ? { from } : {}),
              ...(problems ? { problems } : {}),
            }
          })
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
          })
          return
        }
        if (globals.quiet) return
        for (const change of changes) {
          io.stdout.write(`${itemLine({ ...change, error: change.problems?.join('; ') })}\n`)
        }
        for (const p of problems) io.stdout.write(`  unusable      ${p.path}: ${p.problems.join('; ')}\n`)
        io.stdout.write(
          clean
            ? 'clean: the workspace and the server agree\n'
            : `${changes.length + problems.length} to sync\n`,
        )
      })
    })
}
