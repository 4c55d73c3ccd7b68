// pull, push and sync: one plan, three selections of its actions (style.md §5).

import type { Command } from 'commander'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import { globalOptions } from './context.js'
import { withEngine } from './engine-session.js'
import type { CliIo } from './io.js'
import { type RunOptions, withPublishOptions, withRunOptions } from './run-options.js'
import { exitCodeFor, printOutcome, progressFor } from './run-report.js'

export interface SyncCommandSpec {
  /** Also names the engine's selection of plan actions (SELECT in engine/plan-apply-types.ts). */
  name: 'pull' | 'push' | 'sync'
  summary: string
}

/** push --again: sends the leaves an editor's stale save reverted (engine/push-again.ts). */
function withPushAgain(cmd: Command, name: SyncCommandSpec['name']): Command {
  if (name !== 'push') return cmd
  return cmd.option(
    '--again',
    "put back and send our values of the leaves an editor's stale save reverted on the server (see `cms-sync status`)",
  )
}

export function registerSyncCommand(
  program: Command,
  io: CliIo,
  setExit: (code: number) => void,
  spec: SyncCommandSpec,
): void {
  const command = withPushAgain(
    withRunOptions(program.command(spec.name).description(spec.summary)),
    spec.name,
  )
  // pull never deploys: only the commands that write the server take the publishing override.
  if (spec.name !== 'pull') withPublishOptions(command)
  command.action(async (paths: string[], opts: RunOptions & { again?: boolean }, cmd: Command) => {
    const globals = globalOptions(cmd)
    // push --again while watch runs: the daemon does it on its own state, as resolve.
    if (opts.again && !opts.dryRun) {
      const { viaDaemon } = await import('./via-daemon.js')
      const fromDaemon = await viaDaemon(io, cmd, paths, { command: 'again', keep: 'local' })
      if (fromDaemon) {
        printOutcome(io, globals, spec.name, fromDaemon, false)
        return setExit(exitCodeFor(fromDaemon))
      }
    }
    // The engine loads only when the command runs, so --help stays fast.
    const { applyRun, checkScope, planRun, SELECT } = await import('../engine/plan-and-apply.js')
    // Ctrl-C stops the run between items (main.ts lets these commands end themselves), so it
    // can say what it did and what is left; a second Ctrl-C ends the process at once.
    const interrupt = new AbortController()
    void io.stopSignal.then(() => interrupt.abort(new Error('interrupted')))
    await withEngine(
      io,
      cmd,
      paths,
      { lock: !opts.dryRun, checksum: !!opts.checksum },
      async ({ deps, scope: given }) => {
        // push --again: the reverted leaves go back into their files first, then are pushed.
        let scope = given
        if (opts.again && !opts.dryRun) {
          const { putBackReverted } = await import('../engine/push-again.js')
          const again = await putBackReverted(
            deps.root,
            given,
            new Date().toISOString().replace(/[:.]/g, '-'),
          )
          if (given.length === 0) scope = again
        }
        let planned: Awaited<ReturnType<typeof planRun>>
        try {
          planned = await planRun(deps, {
            ...(opts.prefer ? { prefer: opts.prefer } : {}),
            rebind: !!opts.rebind,
            signal: interrupt.signal,
            scope,
          })
        } catch (error) {
          if (!interrupt.signal.aborted) throw error
          // Stopped while the server was read: nothing was planned, so nothing was applied
          // (a stop like any other: the message, the log's end line, --json's error document).
          throw new CliError(
            `interrupted before anything was applied; run \`cms-sync ${spec.name}\` again`,
            ExitCode.interrupted,
          )
        }
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
          signal: interrupt.signal,
        })
        // An explicit push or sync is the go-ahead a paused watcher waits for (docs/watch.md).
        if (spec.name !== 'pull' && !opts.dryRun && outcome.failed.length === 0 && !outcome.interrupted) {
          await (await import('../watch/mass-change.js')).clearPause(deps.root)
        }
        // A progress line cut off by the stop is cleared before the account.
        if (progress && outcome.interrupted) io.stderr.write('\r\x1b[2K')
        printOutcome(io, globals, spec.name, outcome, !!opts.dryRun)
        setExit(exitCodeFor(outcome))
      },
    )
  })
}
