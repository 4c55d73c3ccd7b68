// Tokens last 8 hours: an all-day daemon meets a refused one daily. It is not the daemon's to log
// in again, but a login elsewhere must be enough: the credentials are read again and the run is
// retried with a new token at once; a write to the credentials file retries a refused run too.

import { watch as watchFolder } from 'node:fs'
import path from 'node:path'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import { tokenRefused } from './daemon-errors.js'
import type { WatchRunOutcome, WatchRuns } from './run-policy.js'
import type { EventSink } from './watch-events.js'
import type { WorkspaceHome } from './workspace-home.js'

export interface TokenRetry {
  /** One run of the queue: refused if the workspace is gone, retried once on a renewed token. */
  run(paths: ReadonlySet<string>, context: { full: boolean; signal: AbortSignal }): Promise<WatchRunOutcome>
  /** The server refused the token and no new one was found. */
  refused(): boolean
}

export function createTokenRetry(t: {
  runs: WatchRuns
  home: WorkspaceHome
  emit: EventSink
  /** Reads the credentials again: true when the token changed since (DaemonOptions.renewToken). */
  renewToken: (() => Promise<boolean>) | undefined
}): TokenRetry {
  let refused = false
  return {
    async run(paths, context) {
      if (!t.home.stillThere()) throw new CliError(t.home.gone!, ExitCode.failed)
      try {
        const outcome = await t.runs.run(paths, context)
        refused = false
        return outcome
      } catch (error) {
        if (!tokenRefused(error) || !t.renewToken) throw error
        if (!(await t.renewToken())) {
          refused = true
          throw error
        }
        refused = false
        t.emit({ event: 'token-renewed' })
        return t.runs.run(paths, context)
      }
    },
    refused: () => refused,
  }
}

/** Calls `onChange` when the credentials file is written; undefined when its folder is missing. */
export function watchCredentials(
  file: string | undefined,
  onChange: () => void,
): { close(): void } | undefined {
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
