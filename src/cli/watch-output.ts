// How the watch daemon's events are shown: one line each on the terminal (what was pushed or
// pulled, conflicts, pauses), one JSON object per line with --json, nothing but errors with -q.

import { describeHeld, describeHeldCommands } from '../engine/held.js'
import { describeReverted } from '../engine/own-pushes.js'
import { printable } from '../util/printable.js'
import { PAUSE_LIFT } from '../watch/mass-change.js'
import type { WatchEvent } from '../watch/watch-events.js'
import { pc } from './colors.js'
import type { GlobalOptions } from './context.js'
import type { CliIo } from './io.js'

function clock(date: Date): string {
  return date.toTimeString().slice(0, 8)
}

export function eventLine(e: WatchEvent): string | undefined {
  switch (e.event) {
    case 'verified':
      // Bytes found as they were are the quiet case (a line a minute would drown the rest).
      return e.same
        ? undefined
        : `${pc.yellow('!')} the server holds other bytes for ${e.path} than at the last sync (replaced in the CMS?): reading them`
    case 'polled':
      return undefined // every few seconds: the lines it led to (pushed, pulled) say what changed
    case 'ready':
      return `${pc.green('●')} watching ${e.root} (${e.tracked} items, ready in ${e.timeToReadyMs} ms); Ctrl-C stops`
    case 'reconciled':
      return `${pc.green('✓')} start-up reconcile done in ${(e.durationMs / 1000).toFixed(1)} s (${e.tracked} items)`
    case 'pushed':
      return `${pc.green('↑')} ${e.action === 'push' ? 'pushed' : 'deleted on the server'} ${e.path}${e.kept ? ` (its server copy is kept in ${e.kept})` : ''}`
    case 'pulled':
      return `${pc.cyan('↓')} ${e.action === 'pull' ? 'pulled' : 'deleted locally'} ${e.path}`
    case 'published': {
      const through = e.connection ? ` through connection ${JSON.stringify(e.connection)}` : ''
      return `${pc.green('⇡')} ${e.action === 'publish' ? 'published' : 'unpublished'} ${e.path}${through}`
    }
    case 'reverted':
      return `${pc.yellow('!')} reverted on the server ${e.path}: ${describeReverted(e.leaves)} (an editor's save of an older copy); ours is kept in ${e.trash ?? '.cms-sync/trash/'}, \`cms-sync push --again ${e.path}\` sends it again`
    case 'merged':
      return `${pc.magenta('⇄')} merged ${e.path}: edits of both sides, on both sides`
    case 'conflict': {
      const leaves = e.leaves?.length
        ? ` at ${e.leaves.map((l) => l.path || '(the document)').join(', ')}`
        : ''
      return `${pc.yellow('!')} conflict ${e.path}${leaves}${e.reason && !leaves ? ` (${e.reason})` : ''}: both sides changed; the server copy is in .cms-sync/conflicts/, see \`cms-sync diff\` then \`cms-sync resolve\``
    }
    case 'failed':
      return `${pc.red('✗')} ${e.action} failed ${e.path}: ${e.error}`
    case 'paused': {
      if (e.reason === 'branch-switch')
        return `${pc.yellow('⏸')} paused: git switched to branch \`${e.branch ?? '(unknown)'}\`${e.fromBranch ? ` from \`${e.fromBranch}\`` : ''} (${e.count} file${e.count === 1 ? '' : 's'} changed); nothing of it is pushed; remote changes are still pulled; switch back to lift it, or ${PAUSE_LIFT}`
      const what = e.reason === 'mass-delete' ? 'deleted' : 'changed'
      return `${pc.yellow('⏸')} paused: ${e.count} files ${what} at once; remote changes are still pulled; ${PAUSE_LIFT}`
    }
    case 'held':
      if (e.held.length === 0) return `${pc.green('✓')} nothing is held any more`
      return e.held
        .map(
          (h) =>
            `${pc.yellow('⏸')} ${describeHeld(h)}; everything else keeps syncing; ${describeHeldCommands(h)}`,
        )
        .join('\n')
    case 'resumed':
      return `${pc.green('▶')} pushing again: ${e.reason}`
    case 'offline':
      return `${pc.yellow('⚠')} the server is out of reach (${e.error}); ${e.pending} change(s) queued, retrying`
    case 'online':
      return `${pc.green('✓')} the server is back`
    case 'token-renewed':
      return `${pc.green('✓')} using the new token from \`cms-sync login\``
    case 'error':
      return `${pc.red('✗')} ${e.message}`
    case 'warning':
      return `${pc.yellow('⚠')} ${e.message}`
    case 'page':
      return `${pc.green('●')} the page: ${e.url} (open it in a browser; the address is this run's key, keep it to yourself)`
    case 'stopped':
      return `${pc.dim('■')} stopped${e.pending > 0 ? ` (${e.pending} local change(s) left for the next start)` : ''}`
  }
}

/** A conflict's leaf names its place as `path`, a reverted push's as `pointer`: either is file text. */
function printableLeaf(leaf: { path?: unknown; pointer?: unknown }) {
  return {
    ...leaf,
    ...(typeof leaf.path === 'string' ? { path: printable(leaf.path) } : {}),
    ...(typeof leaf.pointer === 'string' ? { pointer: printable(leaf.pointer) } : {}),
  }
}

/** The event with its text (paths, errors, messages) as the terminal may show it (printable). */
function printableEvent(e: WatchEvent): WatchEvent {
  const shown: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(e))
    shown[key] =
      typeof value === 'string'
        ? printable(value)
        : key === 'leaves' && Array.isArray(value)
          ? value.map(printableLeaf)
          : value
  return shown as unknown as WatchEvent
}

/** The sink the daemon reports to, per the global output options. */
export function watchPrinter(io: CliIo, globals: GlobalOptions, now: () => Date = () => new Date()) {
  return (e: WatchEvent): void => {
    if (globals.json) {
      io.stdout.write(`${JSON.stringify({ time: now().toISOString(), ...e })}\n`)
      return
    }
    const problem = e.event === 'error' || e.event === 'failed'
    if (globals.quiet && !problem) return
    const stream = problem ? io.stderr : io.stdout
    const line = eventLine(printableEvent(e))
    if (line !== undefined) stream.write(`${pc.dim(clock(now()))} ${line}\n`)
  }
}
