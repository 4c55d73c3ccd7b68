// The page's state from the status model and the daemon's: the conflicts with their leaves side
// by side, the counts `status` gives, what is held, and one line on what the daemon is doing.

import type { DaemonState } from '../watch/daemon.js'
import { heldOf } from './held.js'
import { mediaKind } from './media.js'
import type { ConflictView, DaemonView, LeafView, PageState, StatusInput, StatusItem } from './model.js'

const asText = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value, null, 2))

function leafViews(item: StatusItem): LeafView[] {
  return (item.leaves ?? []).map((leaf) => {
    const base = asText(leaf.base)
    const local = asText(leaf.local)
    const remote = asText(leaf.remote)
    return {
      pointer: leaf.path,
      ...(base !== undefined ? { base } : {}),
      ...(local !== undefined ? { local } : {}),
      ...(remote !== undefined ? { remote } : {}),
      ...(leaf.order ? { order: true as const } : {}),
      // Who changed what since the base: a side whose value differs from the base changed it.
      changedLocal: local !== base,
      changedRemote: remote !== base,
    }
  })
}

function mediaSides(item: StatusItem): ConflictView['media'] {
  const side = (which: 'local' | 'remote') => ({
    url: `media?side=${which}&path=${encodeURIComponent(item.path)}`,
    image: mediaKind(item.path) === 'image',
  })
  return {
    ...(item.local !== 'deleted' ? { local: side('local') } : {}),
    ...(item.remote !== 'deleted' ? { remote: side('remote') } : {}),
  }
}

export function conflictViews(status: StatusInput): ConflictView[] {
  return status.changes
    .filter((c) => c.action === 'conflict')
    .map((c) => ({
      path: c.path,
      kind: c.kind,
      id: c.id,
      local: c.local,
      remote: c.remote,
      ...(c.reason ? { reason: c.reason } : {}),
      leaves: leafViews(c),
      ...(c.kind === 'media' ? { media: mediaSides(c) } : {}),
      folder: c.path.includes('/') ? c.path.slice(0, c.path.lastIndexOf('/')) : '',
    }))
}

export function daemonView(
  mode: 'watch' | 'ui',
  daemon: DaemonState | undefined,
  status: StatusInput | undefined,
  heldCount: number,
  stopped: boolean,
): DaemonView {
  if (mode === 'ui')
    return {
      state: 'not-watching',
      why: 'served by `cms-sync ui`: nothing syncs on its own; each action takes the workspace lock like a command',
    }
  if (stopped) return { state: 'stopped', why: '`cms-sync watch` has stopped' }
  if (!daemon) return { state: 'starting', why: 'the start-up reconcile is under way' }
  const timing = {
    queued: daemon.queued,
    ...(daemon.lastFullRunAt
      ? { nextPollAt: new Date(Date.parse(daemon.lastFullRunAt) + daemon.pollMs).toISOString() }
      : {}),
  }
  if (daemon.offline)
    return { state: 'offline', why: 'the server is out of reach; changes stay queued', ...timing }
  if (daemon.tokenRefused)
    return {
      state: 'offline',
      why: 'the server refuses the token: run `cms-sync login` (the daemon picks the new one up)',
      ...timing,
    }
  const pause = status?.watchPaused
  if (pause) {
    const what = pause.reason === 'mass-delete' ? 'deleted' : 'changed'
    return {
      state: 'paused',
      why: `pushing paused: ${pause.count} files ${what} at once (${pause.reason})`,
      ...timing,
    }
  }
  if (heldCount > 0) return { state: 'holding', why: `${heldCount} change(s) held back (below)`, ...timing }
  return { state: 'watching', ...timing }
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** What `status` names instead of "clean": the page says it too, never "agree" without it. */
function uncheckedOf(status: StatusInput): string[] {
  const unverified = status.unverified?.length ?? 0
  const reverted = status.reverted ?? []
  const notSynced = status.notSynced?.length ?? 0
  return [
    ...(unverified > 0
      ? [
          `the bytes of ${plural(unverified, 'media item were', 'media items were')} not compared with the server's (\`cms-sync status --checksum\` compares them; watch re-reads them within watch.verifyMedia)`,
        ]
      : []),
    ...(reverted.length > 0
      ? [
          `${plural(reverted.length, 'of our pushes was', 'of our pushes were')} reverted on the server (\`cms-sync push --again ${reverted.map((r) => r.path).join(' ')}\` sends ours again)`,
        ]
      : []),
    ...(notSynced > 0
      ? [`${plural(notSynced, 'file is', 'files are')} not synced (\`cms-sync status\` names them and why)`]
      : []),
  ]
}

export function pageState(input: {
  mode: 'watch' | 'ui'
  target: PageState['target']
  token: { source: string }
  rateLimit: PageState['rateLimit']
  status: StatusInput | undefined
  checkedAt: string | undefined
  error: string | undefined
  daemon: DaemonState | undefined
  stopped: boolean
}): PageState {
  const { status } = input
  const held = status ? heldOf(status) : []
  const byAction: Record<string, number> = {}
  for (const c of status?.changes ?? []) byAction[c.action] = (byAction[c.action] ?? 0) + 1
  const problems = status?.problems.length ?? 0
  const toSync = (status?.changes.length ?? 0) + problems
  const refused =
    status?.tokenRefused ?? (input.daemon?.tokenRefused ? 'the server refuses the token' : undefined)
  return {
    mode: input.mode,
    target: input.target,
    token: {
      source: input.token.source,
      ...(status ? { accepted: refused === undefined } : {}),
      ...(refused ? { message: refused } : {}),
    },
    daemon: daemonView(
      input.mode,
      input.daemon,
      status,
      held.reduce((n, g) => n + g.items.length, 0),
      input.stopped,
    ),
    rateLimit: input.rateLimit,
    counts: {
      clean: status !== undefined && toSync === 0,
      toSync,
      problems,
      byAction,
      unchecked: status ? uncheckedOf(status) : [],
    },
    conflicts: status ? conflictViews(status) : [],
    held,
    ...(input.checkedAt ? { checkedAt: input.checkedAt } : {}),
    ...(input.error ? { error: input.error } : {}),
  }
}
