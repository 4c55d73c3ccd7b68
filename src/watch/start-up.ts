// The daemon's start-up (docs/watch.md "Start-up"): the watcher and the state at once, the
// request channel, `ready`, then the start-up reconcile and `reconciled`. A failure before the
// reconcile is done closes what was started and is thrown; a stop meanwhile is not a failure.

import type { EngineLogger } from '../log/engine-logger.js'
import { type DaemonStatus, serveCliRequests } from './daemon-control.js'
import type { PauseControl } from './pause-control.js'
import type { WatchEngine } from './watch-engine.js'
import type { EventSink, OutcomeReporter } from './watch-events.js'
import type { WatcherControl } from './watcher-control.js'
import type { WorkQueue } from './work-queue.js'
import type { WorkspaceHome } from './workspace-home.js'

export interface Started {
  /** Stops serving the CLI's requests. */
  stopServing: () => void
  /** Resolves on the stop signal, or once the workspace folder is gone. */
  stopped: Promise<'stop' | 'gone'>
}

export async function startUp(s: {
  root: string
  stopSignal: Promise<unknown>
  engine: WatchEngine
  watcher: WatcherControl
  queue: WorkQueue
  home: WorkspaceHome
  pauses: PauseControl
  status: DaemonStatus
  emit: EventSink
  reporter: OutcomeReporter
  logger: EngineLogger
}): Promise<Started> {
  const { root, engine, watcher, queue, status, emit } = s
  // Ready once the watcher is: an edit made during the start-up reconcile is queued, not missed,
  // and runs after it. The state is read (and its target checked) meanwhile.
  const opened = engine.open()
  try {
    await Promise.all([watcher.start(), opened])
  } catch (error) {
    status.stopping = true
    await Promise.all([watcher.close(), opened.catch(() => {})])
    throw error
  }
  // `cms-sync resolve` while the daemon runs: carried out here, between two runs, on this state.
  // Served (its key written) before the daemon says it is ready, so a command right after finds
  // it; a workspace deleted meanwhile is the stop below, not an internal error.
  let stopServing: () => void = () => {}
  try {
    stopServing = await serveCliRequests(root, s)
  } catch (error) {
    if (s.home.stillThere()) throw error
  }
  await s.pauses.announce()
  emit({
    event: 'ready',
    root,
    tracked: engine.tracked() ?? 0,
    timeToReadyMs: watcher.timeToReadyMs(),
  })
  const stopped = Promise.race([Promise.resolve(s.stopSignal).then(() => 'stop' as const), s.home.left])
  const reconcileStart = performance.now()
  const first = await Promise.race([queue.requestFull(), stopped])
  if (typeof first !== 'string' && first.kind === 'error') {
    status.stopping = true
    stopServing()
    await Promise.all([watcher.close(), queue.drain(0)])
    throw first.error
  }
  if (typeof first !== 'string' && first.kind === 'done') {
    // The start-up reconcile is a full run: the first poll is due a poll interval after it.
    status.lastFullRunAt = new Date().toISOString()
    emit({
      event: 'reconciled',
      tracked: engine.tracked() ?? 0,
      durationMs: Math.round(performance.now() - reconcileStart),
    })
  }
  return { stopServing, stopped }
}
