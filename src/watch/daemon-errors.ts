// How the daemon words the errors its runs end in: a safety stop's advice for watch, a refused
// token told apart, and the root cause of "the server is out of reach".

import { SafetyStopError } from '../engine/plan-and-apply.js'
import { causeChain, findCause } from '../errors/find-cause.js'
import { RemoteError } from '../remote/errors.js'

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
export function tokenRefused(error: unknown): boolean {
  return findCause(error, (e) => e instanceof RemoteError && e.code === 'unauthorized') !== undefined
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Why the server is out of reach: the client's own error, not the wrappers around it. */
export function rootCauseOf(error: unknown): string {
  return messageOf(
    causeChain(error)
      .filter((e) => e instanceof RemoteError)
      .at(-1) ?? error,
  )
}
