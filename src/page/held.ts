// What is held back and why, for the page: the `held` list of the status model, which names the
// watcher's pause beside the guards' holds (cli/held-now.ts). Both release and drop name the
// commands the CLI offers.

import type { HeldInput, HeldView, StatusInput } from './model.js'

function commands(paths: string[]): { release: string; drop: string } {
  const list = paths.length > 5 ? `${paths.slice(0, 5).join(' ')} ...` : paths.join(' ')
  return { release: `cms-sync push --allow-deletes ${list}`, drop: `cms-sync restore ${list}` }
}

/**
 * The buttons of one held change: a workspace change waits to be pushed (carry out: push it,
 * deletions allowed; drop: restore the files), a server deletion waits to be carried out here
 * (carry out: resolve keeping the server's side; drop: resolve keeping the files, which puts them
 * back on the server). A delete that would orphan children has no button to carry it out.
 */
function actsOf(entry: HeldInput): Pick<HeldView, 'releaseAct' | 'dropAct'> {
  if (entry.side === 'remote')
    return { releaseAct: { op: 'resolve', keep: 'remote' }, dropAct: { op: 'resolve', keep: 'local' } }
  if (entry.guard === 'branch-switch') return {}
  return {
    ...(entry.guard === 'orphans' ? {} : { releaseAct: { op: 'release' } }),
    dropAct: { op: 'restore' },
  }
}

function viewOf(
  entry: HeldInput,
  kindOf: (path: string) => string | undefined,
  actionOf: (path: string) => string | undefined,
): HeldView {
  const paths = entry.paths ?? (entry.path ? [entry.path] : [])
  const fallback = commands(paths)
  return {
    reason: entry.reason ?? 'held',
    ...(entry.since ? { since: entry.since } : {}),
    ...(entry.message ? { message: entry.message } : {}),
    items: paths.map((path) => {
      const kind = entry.kind ?? kindOf(path)
      // What the plan does to the path (a pause holds deletions as well as edits).
      const action = actionOf(path) ?? entry.action
      return { path, ...(kind ? { kind } : {}), ...(action ? { action } : {}) }
    }),
    release: entry.release ?? fallback.release,
    drop: entry.drop ?? fallback.drop,
    ...actsOf(entry),
  }
}

export function heldOf(status: StatusInput): HeldView[] {
  const kindOf = (path: string) => status.changes.find((c) => c.path === path)?.kind
  const actionOf = (path: string) => status.changes.find((c) => c.path === path)?.action
  return status.held.map((entry) => viewOf(entry, kindOf, actionOf))
}
