// What is held back and why, for the page: the `held` list of the status model where it has one,
// else the watcher's pause (a mass change or mass delete holds every local change to push, the
// `status` line "watch paused pushing"). Both release and drop name the commands the CLI offers.

import type { HeldInput, HeldView, StatusInput } from './model.js'

const PUSH_SIDE = new Set(['push', 'delete-remote', 'merge'])

function commands(paths: string[]): { release: string; drop: string } {
  const list = paths.length > 5 ? `${paths.slice(0, 5).join(' ')} ...` : paths.join(' ')
  return { release: `cms-sync push --allow-deletes ${list}`, drop: `cms-sync restore ${list}` }
}

function grouped(held: HeldInput[], kindOf: (path: string) => string | undefined): HeldView[] {
  const groups = new Map<string, HeldView>()
  for (const entry of held) {
    const paths = entry.paths ?? (entry.path ? [entry.path] : [])
    const reason = entry.reason ?? 'held'
    const key = `${reason}\u0000${entry.since ?? ''}\u0000${entry.message ?? ''}`
    let group = groups.get(key)
    if (!group) {
      group = {
        reason,
        ...(entry.since ? { since: entry.since } : {}),
        ...(entry.message ? { message: entry.message } : {}),
        items: [],
        release: '',
        drop: '',
      }
      groups.set(key, group)
    }
    for (const path of paths) {
      const kind = entry.kind ?? kindOf(path)
      group.items.push({ path, ...(kind ? { kind } : {}) })
    }
  }
  return [...groups.values()].map((g) => ({ ...g, ...commands(g.items.map((i) => i.path)) }))
}

export function heldOf(status: StatusInput): HeldView[] {
  const kindOf = (path: string) => status.changes.find((c) => c.path === path)?.kind
  if (status.held) return grouped(status.held, kindOf)
  const pause = status.watchPaused
  if (!pause) return []
  const items = status.changes
    .filter((c) => PUSH_SIDE.has(c.action))
    .map((c) => ({ path: c.path, kind: c.kind, action: c.action }))
  const what = pause.reason === 'mass-delete' ? 'deleted' : 'changed'
  return [
    {
      reason: pause.reason,
      since: pause.since,
      message: `${pause.count} files ${what} at once: pushing is paused until you choose`,
      items,
      ...commands(items.map((i) => i.path)),
    },
  ]
}
