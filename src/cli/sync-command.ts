// pull, push and sync: one plan, three selections of its actions (style.md §5).

import type { Command } from 'commander'
import { globalOptions } from './context.js'
import { withEngine } from './engine-session.js'
import type { CliIo } from './io.js'
import { type RunOptions, withPublishOptions, withRunOptions } from './run-options.js'
import { exitCodeFor, printOutcome, progressFor } from './run-report.js'

export interface SyncCommandSpec {
  /** Also names the engine's selection of plan actions (SELECT in engine/run.ts). */
  name: 'pull' | 'push' | 'sync'
  summary: string
}

export function registerSyncCommand(
  program: Command,
  io: CliIo,
  setExit: (code: number) => void,
  spec: SyncCommandSpec,
): void {
  const command = withRunOptions(program.command(spec.name).description(spec.summary))
  // pull never deploys: only the commands that write the server take the publishing override.
  if (spec.name !== 'pull') withPublishOptions(command)
  command.action(async (paths: string[], opts: RunOptions, cmd: Command) => {
    const globals = globalOptions(cmd)
    // The engine loads only when the command runs, so --help stays fast.
    const { applyRun, checkScope, planRun, SELECT } = await import('../engine/run.js')
    await withEngine(
      io,
      cmd,
      paths,
      { lock: !opts.dryRun, checksum: !!opts.checksum },
      async ({ deps, scope }) => {
        const planned = await planRun(deps, {
          ...(opts.prefer ? { prefer: opts.prefer } : {}),
          rebind: !!opts.rebind,
        })
        try {
          checkScope(planned, scope)
        } catch (error) {
          await planned.media?.dispose()
          throw error
        }
        const progress = progressFor(io, globals)
        const outcome = await applyRun(deps, planned, {
          select: SELECT[spec.name],
          scope,
          dryRun: !!opts.dryRun,
          allowDeletes: !!opts.allowDeletes,
          reportScanProblems: spec.name !== 'pull',
          reportRemoteProblems: spec.name !== 'push',
          // A merge writes both sides on sync; pull and push each write their own half.
          mergeWrites: spec.name === 'pull' ? 'local' : spec.name === 'push' ? 'remote' : 'both',
          ...(progress ? { onProgress: progress } : {}),
        })
        // An explicit push or sync is the go-ahead a paused watcher waits for (docs/watch.md).
        if (spec.name !== 'pull' && !opts.dryRun && outcome.failed.length === 0) {
          await (await import('../watch/mass-change.js')).clearPause(deps.root)
        }
        printOutcome(io, globals, spec.name, outcome, !!opts.dryRun)
        setExit(exitCodeFor(outcome))
      },
    )
  })
}
