// `cms-sync watch` wired together (docs/watch.md): the watcher feeds dirty paths, minus our own
// writes, through the mass change guard into the work queue, which runs the engine one run at a
// time; a poller asks every watch.pollSeconds whether any listing changed (one conditional
// request per kind: a quiet poll is only that, the watcher's events being the local side), a
// slower one for a deep rescan that states and re-reads every file; a watcher that failed, was
// restarted or saw a git operation has the next poll state every file too (run-policy.ts). A
// stop signal drains it all. The caller holds the workspace lock for as long as this runs.
// Each part is a module of its own; this file only wires them, in start-up and shutdown order.

import type { EngineDeps } from '../engine/plan-apply-types.js'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import type { EngineLogger } from '../log/engine-logger.js'
import { loadIgnoreRules } from '../workspace/ignore-rules.js'
import { watchStats } from '../workspace/stat-check.js'
import { createBatchIntake } from './batch-intake.js'
import { createDaemonControl, type DaemonControl, type DaemonStatus } from './daemon-control.js'
import { forWatch, rootCauseOf } from './daemon-errors.js'
import { type DaemonPollers, startPollers } from './daemon-pollers.js'
import type { MassChangeThresholds } from './mass-change.js'
import type { VerifyBudget } from './media-verifier.js'
import { createOwnWrites } from './own-writes.js'
import { createPauseControl } from './pause-control.js'
import { createPublishQuiet, type PublishQuiet } from './publish-quiet.js'
import { createWatchRuns, type WatchRunOutcome } from './run-policy.js'
import { createSaveTimer, type SaveTimer } from './save-timer.js'
import { type ShutdownHooks, type ShutdownReport, shutdownOnStop } from './shutdown.js'
import { startUp } from './start-up.js'
import { createTokenRetry, watchCredentials } from './token-retry.js'
import { createWatchEngine, type WatchEngine } from './watch-engine.js'
import { createOutcomeReporter, type EventSink, type OutcomeReporter } from './watch-events.js'
import { createWatcherControl, type WatcherControl } from './watcher-control.js'
import { createWorkQueue, type Settled, type WorkQueue } from './work-queue.js'
import { type WorkspaceHome, watchHome } from './workspace-home.js'

export type { DaemonControl, DaemonState } from './daemon-control.js'

/** watch.publishQuietMs's default (src/config/config.ts). */
export const DEFAULT_PUBLISH_QUIET_MS = 5000

export interface DaemonOptions {
  deps: EngineDeps
  debounceMs: number
  /** Remote poll (a full reconcile) every this many ms: watch.pollSeconds. */
  pollMs: number
  rescanMs?: number
  shutdownDeadlineMs?: number
  stopSignal: Promise<unknown>
  emit: EventSink
  /**
   * After the server refused the token: reads the credentials again and uses a token that
   * changed since (a `cms-sync login` in another terminal). True when there is a new one.
   */
  renewToken?: () => Promise<boolean>
  /** When the watcher pauses pushing (watch.massChange / watch.massDelete in cms-sync.yaml). */
  thresholds?: MassChangeThresholds
  /** The credentials file renewToken reads: a change to it retries a refused run at once. */
  credentialsFile?: string
  /** How long an item's saves must pause before its publish goes (watch.publishQuietMs). */
  publishQuietMs?: number
  /** Given once the daemon serves requests: the local page's handle on it (src/page/). */
  onControl?: (control: DaemonControl) => void
  /** The budget for re-reading media bytes the server cannot vouch for (watch.verifyMedia). */
  verifyMedia?: VerifyBudget
}

/** The caller's event sink, with each event logged as well. */
function loggedSink(emit: EventSink, logger: EngineLogger): EventSink {
  return (event) => {
    // A poll every few seconds is not worth a line in the log file unless asked for (-v).
    if (event.event === 'polled') logger.debug({ ...event }, 'watch polled')
    else logger.info({ ...event }, `watch ${event.event}`)
    emit(event)
  }
}

/** Tells how each run of the queue settled: offline and back online, an error, what it did. */
function tellSettled(t: {
  status: DaemonStatus
  emit: EventSink
  reporter: OutcomeReporter
  pending: () => number
}): (settled: Settled) => void {
  const { status, emit, reporter } = t
  return (settled) => {
    if (settled.kind === 'offline') {
      if (!status.offline && !status.stopping)
        emit({ event: 'offline', pending: t.pending(), error: rootCauseOf(settled.cause) })
      status.offline = true
      return
    }
    if (status.offline && !status.stopping) emit({ event: 'online' })
    status.offline = false
    if (settled.kind === 'error') reporter.error(forWatch(settled.error))
    else {
      const done = settled as WatchRunOutcome & { kind: 'done' }
      if (done.outcome) reporter.outcome(done.outcome, done.whole)
      else reporter.remind()
      // Told after what it did: a script waits for this to know the poll has looked.
      if (done.look) emit({ event: 'polled', ...done.look })
    }
  }
}

/** Shutdown's steps, in their order (shutdown.ts runs them): stop taking events, drain, save. */
function shutdownSteps(d: {
  status: DaemonStatus
  stopServing: () => void
  credentialsWatch: { close(): void } | undefined
  quiet: PublishQuiet
  watcher: WatcherControl
  pollers: DaemonPollers
  queue: WorkQueue
  saver: SaveTimer
  home: WorkspaceHome
  engine: WatchEngine
  logger: EngineLogger
}): ShutdownHooks {
  return {
    stopTakingEvents: async () => {
      d.status.stopping = true
      d.stopServing()
      d.credentialsWatch?.close()
      // Publishes still waiting for quiet stay owed in the state: the next run does them.
      d.quiet.close()
      await d.watcher.restarting()
      await Promise.all([d.watcher.close(), d.pollers.stop()])
    },
    drain: (ms) => d.queue.drain(ms),
    // The engine commits state per confirmed item; edit-only runs leave the save for later.
    saveState: () => {
      d.saver.cancel()
      return d.home.stillThere() ? d.engine.saveState() : Promise.resolve()
    },
    log: (message, fields) => d.logger.info(fields ?? {}, `watch: ${message}`),
  }
}

/** Runs until stopSignal; resolves after a clean shutdown. Rejects only if the start-up reconcile threw. */
export async function runDaemon(opts: DaemonOptions): Promise<ShutdownReport> {
  const { root, logger } = opts.deps
  const emit = loggedSink(opts.emit, logger)
  const ownWrites = createOwnWrites(root)
  const deps: EngineDeps = {
    ...opts.deps,
    beforeLocalWrite: (rel, sha256) => ownWrites.expect(rel, sha256),
  }
  const reporter = createOutcomeReporter(emit)
  const home = watchHome(root, (gone) => reporter.error(gone))
  const status: DaemonStatus = { offline: false, stopping: false, rehashNext: false }

  const saver = createSaveTimer(
    () => (home.stillThere() ? engine.saveState() : Promise.resolve()),
    (error) => logger.error({ error: (error as Error).message }, 'watch: saving the state failed'),
  )
  // A burst of saves of a published item is one publish, once the saves pause.
  const quiet = createPublishQuiet(opts.publishQuietMs ?? DEFAULT_PUBLISH_QUIET_MS, (paths) =>
    queue.add(paths),
  )
  const engine = createWatchEngine(deps, {
    onUnsaved: () => saver.unsaved(),
    deferPublish: (path) => quiet.defer(path),
  })
  const watcher = createWatcherControl({
    root,
    debounceMs: opts.debounceMs,
    pollMs: opts.pollMs,
    rules: await loadIgnoreRules(root),
    emit,
    logger,
    onBatch: (paths, info) => takeBatch(paths, info),
    stopping: () => status.stopping,
    rulesChanged: () => stats.forget(),
    lookAgain: () => {
      runs.requireFull()
      runs.requireLook()
    },
    runFull: () => void queue.requestFull(),
  })
  const stats = watchStats(
    root,
    [...deps.codecs.map((codec) => codec.kind), ...(deps.media ? (['media'] as const) : [])],
    (rel, isDir) => watcher.rules().ignores(rel, isDir),
  )
  // The mass change guard, over the watcher's batches and over what full runs find changed.
  const pauses = createPauseControl({
    root,
    thresholds: opts.thresholds,
    engine,
    emit,
    reporter,
    pending: () => watcher.pending(),
    requireFull: () => runs.requireFull(),
  })
  const runs = createWatchRuns(engine, deps, {
    stats,
    paused: pauses.paused,
    rehash: () => {
      const rehash = status.rehashNext
      status.rehashNext = false
      return rehash
    },
    whilePaused: pauses.whilePaused,
    holdPushes: pauses.holdPushes,
    eventsComplete: watcher.eventsComplete,
  })
  const tokens = createTokenRetry({ runs, home, emit, renewToken: opts.renewToken })
  const queue = createWorkQueue({
    run: (paths, context) => tokens.run(paths, context),
    onOutcome: tellSettled({ status, emit, reporter, pending: () => queue.pending.size }),
  })
  const takeBatch = createBatchIntake({ stillThere: home.stillThere, ownWrites, quiet, pauses, runs, queue })

  // The parts every later step is given.
  const parts = { root, engine, queue, reporter, logger, emit, status, home, watcher, pauses }
  const { stopServing, stopped } = await startUp({ ...parts, stopSignal: opts.stopSignal })
  opts.onControl?.(createDaemonControl({ ...parts, tokens, pollMs: opts.pollMs }))
  // A login in another terminal rewrites the credentials file: a refused daemon retries then,
  // not after its backoff (up to minutes).
  const credentialsWatch = watchCredentials(opts.credentialsFile, () => {
    if (tokens.refused() && !status.stopping) void queue.requestFull()
  })
  const pollers = startPollers(opts, { ...parts, runs, saver, media: deps.media })
  const steps = shutdownSteps({ ...parts, stopServing, credentialsWatch, quiet, pollers, saver })
  const report = await shutdownOnStop(stopped, steps, opts.shutdownDeadlineMs)
  emit({
    event: 'stopped',
    pending: report.pending,
    finished: report.finished,
    durationMs: report.durationMs,
  })
  if (home.gone !== undefined) throw new CliError(home.gone, ExitCode.failed)
  return report
}
