// `cms-sync watch` wired together (docs/watch.md): the watcher feeds dirty paths, minus our own
// writes, through the mass change guard into the work queue, which runs the engine one run at a
// time; a poller asks every watch.pollSeconds whether any listing changed (one conditional
// request per kind: a quiet poll is only that, the watcher's events being the local side), a
// slower one for a deep rescan that states and re-reads every file; a watcher that failed, was
// restarted or saw a git operation has the next poll state every file too (run-policy.ts). A
// stop signal drains it all. The caller holds the workspace lock for as long as this runs.

import { type FSWatcher, type Stats, statSync, watch as watchFolder } from 'node:fs'
import path from 'node:path'
import type { Outcome } from '../engine/outcome.js'
import { SafetyStopError } from '../engine/plan-and-apply.js'
import type { EngineDeps } from '../engine/plan-apply-types.js'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import { causeChain, findCause } from '../errors/find-cause.js'
import { RemoteError } from '../remote/errors.js'
import { trackedCount } from '../state/state-file.js'
import { type IgnoreRules, loadIgnoreRules } from '../workspace/ignore-rules.js'
import { watchStats } from '../workspace/stat-check.js'
import { gitActivity } from './git-activity.js'
import { type LocalBatchInfo, type WorkspaceWatcher, watchWorkspace } from './local-changes.js'
import {
  clearPause,
  createChangeWindow,
  decideMassChange,
  heldByPause,
  type MassChangeThresholds,
  minPausePaths,
  type PauseInfo,
  pauseForBranchSwitch,
  pauseInfoFor,
  readPause,
  setPause,
} from './mass-change.js'
import { startMediaVerifier, type VerifyBudget } from './media-verifier.js'
import { createOwnWrites } from './own-writes.js'
import { startPoller } from './poller.js'
import { createPublishQuiet } from './publish-quiet.js'
import { type SettleRequest, serveRequests } from './requests.js'
import { createWatchRuns, type WatchRunOutcome } from './run-policy.js'
import { createSaveTimer } from './save-timer.js'
import { type ShutdownReport, shutdownOnStop } from './shutdown.js'
import { createWatchEngine } from './watch-engine.js'
import { createOutcomeReporter, type EventSink } from './watch-events.js'
import { createWorkQueue, type Settled } from './work-queue.js'

/** The deep rescan: catches an edit that kept size and mtime, which the stat cache would miss. */
export const DEFAULT_RESCAN_MS = 5 * 60_000
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

/** What the daemon is doing right now, for the local page. */
export interface DaemonState {
  offline: boolean
  /** The server refused the token and no new one was found. */
  tokenRefused: boolean
  /** Local changes waiting for a run. */
  queued: number
  pollMs: number
  /** ISO time the last full reconcile (a remote poll) ended. */
  lastFullRunAt?: string
}

/** The running daemon, as the local page drives it: everything goes through the work queue. */
export interface DaemonControl {
  state(): DaemonState
  /** `resolve` or `restore`, exactly as the CLI asks it (requests.ts). */
  settle(request: SettleRequest): Promise<Outcome>
  /** Pushes held changes under `scope` (deletions allowed) and lifts the pause, as `cms-sync push` does. */
  release(scope: string[]): Promise<Outcome>
}

/**
 * A safety stop's "re-run with --allow-deletes" names a flag watch does not take: the exact
 * commands instead (the one-shot run needs the lock the daemon holds).
 */
export function forWatch(error: unknown): string {
  const message = messageOf(error)
  if (!(error instanceof SafetyStopError) || error.rerunWith === undefined) return message
  const flag = error.rerunWith
  return message.replace(
    `re-run with ${flag}`,
    `stop \`cms-sync watch\` (Ctrl-C), run \`cms-sync sync ${flag}\` and start watch again`,
  )
}

/** Whether the error, or one behind it (a listing stop wraps the client's), is a refused token. */
function tokenRefused(error: unknown): boolean {
  return findCause(error, (e) => e instanceof RemoteError && e.code === 'unauthorized') !== undefined
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Why the server is out of reach: the client's own error, not the wrappers around it. */
function rootCauseOf(error: unknown): string {
  return messageOf(
    causeChain(error)
      .filter((e) => e instanceof RemoteError)
      .at(-1) ?? error,
  )
}

/**
 * Whether the workspace folder is still the one watch started in: a folder moved away (or
 * deleted, or replaced by another of the same name) must not be written to, not even its state.
 */
function sameFolder(root: string, home: Stats): boolean {
  try {
    const now = statSync(root, { throwIfNoEntry: false })
    return now?.isDirectory() === true && now.ino === home.ino && now.dev === home.dev
  } catch {
    return false
  }
}

/** Calls `onChange` when the credentials file is written; undefined when its folder is missing. */
function watchCredentials(file: string | undefined, onChange: () => void): FSWatcher | undefined {
  if (file === undefined) return undefined
  try {
    const watcher = watchFolder(path.dirname(file), (_event, name) => {
      if (name === null || String(name).startsWith(path.basename(file))) onChange()
    })
    watcher.on('error', () => {}) // the poller's retries still re-read the credentials
    return watcher
  } catch {
    return undefined
  }
}

/** Runs until stopSignal; resolves after a clean shutdown. Rejects only if the start-up reconcile threw. */
export async function runDaemon(opts: DaemonOptions): Promise<ShutdownReport> {
  const { root, logger } = opts.deps
  const emit: EventSink = (event) => {
    // A poll every few seconds is not worth a line in the log file unless asked for (-v).
    if (event.event === 'polled') logger.debug({ ...event }, 'watch polled')
    else logger.info({ ...event }, `watch ${event.event}`)
    opts.emit(event)
  }
  const ownWrites = createOwnWrites(root)
  const deps: EngineDeps = {
    ...opts.deps,
    beforeLocalWrite: (rel, sha256) => ownWrites.expect(rel, sha256),
  }
  const reporter = createOutcomeReporter(emit)
  // The folder watch started in. Checked before every run and batch: once it is gone, watch
  // stops and nothing more is written at its path (a run would recreate it with a pull's files).
  const home = statSync(root)
  let gone: string | undefined
  let leave: () => void = () => {}
  const left = new Promise<'gone'>((resolve) => {
    leave = () => resolve('gone')
  })
  function stillThere(): boolean {
    if (gone === undefined && !sameFolder(root, home)) {
      gone = `the workspace ${root} was moved away or deleted: watch stopped, and writes nothing there (start it again where the workspace is now)`
      reporter.error(gone)
      leave()
    }
    return gone === undefined
  }
  let offline = false
  let rehashNext = false
  /**
   * The watcher failed (the system's watch limit, a folder it could not watch): its events may
   * miss edits from here on, so every poll states every file, until a restart watches afresh.
   */
  let eventsLost = false
  let stopping = false

  const saver = createSaveTimer(
    () => (stillThere() ? engine.saveState() : Promise.resolve()),
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
  let rules: IgnoreRules = await loadIgnoreRules(root)
  const stats = watchStats(
    root,
    [...deps.codecs.map((codec) => codec.kind), ...(deps.media ? (['media'] as const) : [])],
    (rel, isDir) => rules.ignores(rel, isDir),
  )
  const runs = createWatchRuns(engine, deps, {
    stats,
    paused: async () => (await readPause(root)) !== undefined,
    rehash: () => {
      const rehash = rehashNext
      rehashNext = false
      return rehash
    },
    // What the pause holds is told with the paths it holds now; once none is left (restored,
    // reverted, a checkout switched back), the pause lifts.
    whilePaused: async (pushing) => {
      const info = await readPause(root)
      if (!info) return
      if (pushing.length > 0 || (watcher?.pending ?? 0) > 0) {
        reporter.pause(heldByPause(info, pushing))
        // A batch still gathering may be the restore: the next poll looks at everything again.
        if (pushing.length === 0) runs.requireFull()
        return
      }
      await clearPause(root)
      recent.clear()
      emit({ event: 'resumed', reason: 'nothing the pause held is left to push (restored or reverted)' })
      reporter.pause(undefined)
    },
    // A batch still gathering may be a checkout under way: let the guard see it whole first.
    holdPushes: async ({ changed, deleted }) =>
      (watcher?.pending ?? 0) > 0 || (await guard(new Set(changed), new Set(deleted))),
    eventsComplete: () => watcher !== undefined && !eventsLost,
  })
  // Tokens last 8 hours: an all-day daemon meets a refused one daily. It is not the daemon's to
  // log in again, but a login elsewhere must be enough: the credentials are read again and the
  // run is retried with a new token at once.
  let refused = false
  async function runWithToken(paths: ReadonlySet<string>, context: { full: boolean; signal: AbortSignal }) {
    if (!stillThere()) throw new CliError(gone!, ExitCode.failed)
    try {
      const outcome = await runs.run(paths, context)
      refused = false
      return outcome
    } catch (error) {
      if (!tokenRefused(error) || !opts.renewToken) throw error
      if (!(await opts.renewToken())) {
        refused = true
        throw error
      }
      refused = false
      emit({ event: 'token-renewed' })
      return runs.run(paths, context)
    }
  }
  const queue = createWorkQueue({
    run: (paths, context) => runWithToken(paths, context),
    onOutcome: (settled: Settled) => {
      if (settled.kind === 'offline') {
        if (!offline && !stopping)
          emit({ event: 'offline', pending: queue.pending.size, error: rootCauseOf(settled.cause) })
        offline = true
        return
      }
      if (offline && !stopping) emit({ event: 'online' })
      offline = false
      if (settled.kind === 'error') reporter.error(forWatch(settled.error))
      else {
        const done = settled as WatchRunOutcome & { kind: 'done' }
        if (done.outcome) reporter.outcome(done.outcome, done.whole)
        else reporter.remind()
        // Told after what it did: a script waits for this to know the poll has looked.
        if (done.look) emit({ event: 'polled', ...done.look })
      }
    },
  })

  // The mass change guard, over the watcher's batches and over what full runs find changed.
  const recent = createChangeWindow()
  async function guard(changed: ReadonlySet<string>, deleted: ReadonlySet<string>): Promise<boolean> {
    const counts = recent.add(changed, deleted)
    // Below this many paths no workspace size makes a mass change, so the state is not read.
    if (counts.changed <= minPausePaths(opts.thresholds)) return false
    const tracked = engine.tracked() ?? (await trackedCount(root))
    const decision = decideMassChange({ ...counts, tracked }, opts.thresholds)
    if (!decision.pause) return false
    await pauseFor(pauseInfoFor(decision, changed))
    return true
  }

  /** Pauses pushing (unless paused already) and says so. */
  async function pauseFor(info: PauseInfo): Promise<void> {
    if (await readPause(root)) return
    await setPause(root, info)
    emit({ event: 'paused', ...info })
    reporter.pause(heldByPause(info))
    recent.clear()
  }

  async function onBatch(paths: Set<string>, info: LocalBatchInfo): Promise<void> {
    if (!stillThere()) return
    // Git writes many files at once, deleting and renaming: the next poll states every file.
    if (info.git) runs.requireLook()
    const changed = await ownWrites.filterBatch(paths) // first, so a big pull never trips the guard
    if (changed.size === 0) return
    quiet.saved(changed)
    // A branch switch brings that branch's files: a pause naming it, never a push.
    if (info.git?.switched) await pauseFor(pauseForBranchSwitch(info.git, changed))
    else await guard(changed, new Set([...info.deleted].filter((p) => changed.has(p))))
    if (info.flood) {
      runs.requireFull()
      runs.requireLook()
      void queue.requestFull()
    } else queue.add(changed)
  }

  let watcher: WorkspaceWatcher | undefined
  let warnedNoSpace = false
  // The repository the workspace is in, read (never run) to see git's operations as such.
  const git = gitActivity(root)
  async function startWatcher(): Promise<void> {
    const next = watchWorkspace(root, {
      debounceMs: opts.debounceMs,
      ...(git ? { git } : {}),
      ignoreRules: rules,
      onBatch,
      onError: (error) => {
        // Events may be lost from here on: each poll's stat look finds what moved.
        eventsLost = true
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
          if (warnedNoSpace) return
          warnedNoSpace = true
          emit({
            event: 'warning',
            message: `the system's file watch limit is reached (raise fs.inotify.max_user_watches); edits are still found by the poll every ${Math.round(opts.pollMs / 1000)} s, which looks at every file`,
          })
          return
        }
        emit({ event: 'warning', message: `watching files: ${messageOf(error)}` })
      },
      onIgnoreFileChange: () => void restartWatcher(),
    })
    watcher = next
    await next.ready
  }
  // .cmsyncignore changed: folders the old rules ignored were never crawled, so start afresh.
  let restarting: Promise<void> = Promise.resolve()
  function restartWatcher(): Promise<void> {
    restarting = restarting.then(async () => {
      if (stopping) return
      await watcher?.close()
      rules = await loadIgnoreRules(root)
      stats.forget()
      // The new watcher crawls afresh; what the old one missed meanwhile the next look finds.
      eventsLost = false
      await startWatcher()
      runs.requireFull()
      runs.requireLook()
      logger.info({}, 'watch: .cmsyncignore changed, watcher restarted')
      void queue.requestFull()
    })
    return restarting
  }

  let lastFullRunAt: string | undefined
  const fullRun = async () => {
    const outcome = await queue.requestFull()
    if (outcome.kind === 'offline') throw new Error('the server is out of reach')
    if (outcome.kind === 'error') throw outcome.error
    lastFullRunAt = new Date().toISOString()
  }
  const logRetry = (error: unknown, retryInMs: number) =>
    logger.warn({ error: messageOf(error), retryInMs }, 'watch: full reconcile failed')

  // Ready once the watcher is: an edit made during the start-up reconcile is queued, not missed,
  // and runs after it. The state is read (and its target checked) meanwhile.
  const opened = engine.open()
  try {
    await Promise.all([startWatcher(), opened])
  } catch (error) {
    stopping = true
    await Promise.all([watcher?.close(), opened.catch(() => {})])
    throw error
  }
  // `cms-sync resolve` while the daemon runs: carried out here, between two runs, on this state.
  // Served (its key written) before the daemon says it is ready, so a command right after finds
  // it; a workspace deleted meanwhile is the stop below, not an internal error.
  let stopServing: () => void = () => {}
  try {
    stopServing = await serveRequests(root, async (request) => {
      logger.info({ ...request }, `watch: ${request.command} asked by the CLI`)
      const outcome = await queue.exclusive(() => engine.settle(request))
      reporter.outcome(outcome, false)
      return { outcome }
    })
  } catch (error) {
    if (stillThere()) throw error
  }
  const paused = await readPause(root)
  if (paused) {
    emit({ event: 'paused', ...paused })
    reporter.pause(heldByPause(paused))
  }
  emit({
    event: 'ready',
    root,
    tracked: engine.tracked() ?? 0,
    timeToReadyMs: Math.round(watcher?.timeToReadyMs ?? 0),
  })
  const stopped = Promise.race([Promise.resolve(opts.stopSignal).then(() => 'stop' as const), left])
  const reconcileStart = performance.now()
  const first = await Promise.race([queue.requestFull(), stopped])
  if (typeof first !== 'string' && first.kind === 'error') {
    stopping = true
    stopServing()
    await Promise.all([watcher?.close(), queue.drain(0)])
    throw first.error
  }
  if (typeof first !== 'string' && first.kind === 'done') {
    // The start-up reconcile is a full run: the first poll is due a poll interval after it.
    lastFullRunAt = new Date().toISOString()
    emit({
      event: 'reconciled',
      tracked: engine.tracked() ?? 0,
      durationMs: Math.round(performance.now() - reconcileStart),
    })
  }
  opts.onControl?.({
    state: () => ({
      offline,
      tokenRefused: refused,
      queued: queue.pending.size,
      pollMs: opts.pollMs,
      ...(lastFullRunAt ? { lastFullRunAt } : {}),
    }),
    settle: async (request) => {
      logger.info({ ...request }, `watch: ${request.command} asked by the local page`)
      const outcome = await queue.exclusive(() => engine.settle(request))
      reporter.outcome(outcome, false)
      return outcome
    },
    release: async (scope) => {
      logger.info({ scope }, 'watch: held changes pushed from the local page')
      const outcome = await queue.exclusive(() => engine.release(scope))
      if (outcome.failed.length === 0) {
        await clearPause(root)
        recent.clear()
      }
      reporter.outcome(outcome, false)
      return outcome
    },
  })
  // A login in another terminal rewrites the credentials file: a refused daemon retries then,
  // not after its backoff (up to minutes).
  const credentialsWatch = watchCredentials(opts.credentialsFile, () => {
    if (refused && !stopping) void queue.requestFull()
  })
  // The stat look, when the poll takes one, is taken before it queues its run, so edits do not
  // wait behind it.
  const poll = startPoller({
    intervalMs: opts.pollMs,
    task: async () => {
      await runs.lookAhead()
      await fullRun()
    },
    onError: logRetry,
  })
  const rescan = startPoller({
    intervalMs: opts.rescanMs ?? DEFAULT_RESCAN_MS,
    task: () => {
      rehashNext = true
      return fullRun()
    },
    onError: logRetry,
  })
  // Media bytes the listing cannot vouch for (upstream) are re-read, paced, oldest first.
  const media = deps.media
  if (media && !media.recheck) media.recheck = new Set()
  const recheck = media?.recheck
  const verifier =
    media && recheck && opts.verifyMedia
      ? startMediaVerifier({
          budget: opts.verifyMedia,
          candidates: () => (offline || stopping ? [] : engine.mediaToVerify()),
          hash: (id) => media.api.hash(id),
          verified: (item, at) => {
            if (engine.markVerified(item.path, item.sha256, at)) saver.unsaved()
            emit({ event: 'verified', path: item.path, same: true })
          },
          changed: (item) => {
            emit({ event: 'verified', path: item.path, same: false })
            recheck.add(item.id)
            // The listing looks as before: only a full plan reads the item again.
            runs.requireFull()
            void queue.requestFull()
          },
          onError: (error) =>
            logger.warn({ error: messageOf(error) }, 'watch: re-reading media bytes failed'),
        })
      : undefined

  const report = await shutdownOnStop(
    stopped,
    {
      stopTakingEvents: async () => {
        stopping = true
        stopServing()
        credentialsWatch?.close()
        // Publishes still waiting for quiet stay owed in the state: the next run does them.
        quiet.close()
        await restarting
        await Promise.all([watcher?.close(), poll.stop(0), rescan.stop(0), verifier?.stop(0)])
      },
      drain: (ms) => queue.drain(ms),
      // The engine commits state per confirmed item; edit-only runs leave the save for later.
      saveState: () => {
        saver.cancel()
        return stillThere() ? engine.saveState() : Promise.resolve()
      },
      log: (message, fields) => logger.info(fields ?? {}, `watch: ${message}`),
    },
    opts.shutdownDeadlineMs,
  )
  emit({
    event: 'stopped',
    pending: report.pending,
    finished: report.finished,
    durationMs: report.durationMs,
  })
  if (gone !== undefined) throw new CliError(gone, ExitCode.failed)
  return report
}
