// The planner: (base, local, remote) -> plan. Pure: no fs, no http, no clock, no logger, so
// status, pull, push, sync, resolve and watch all see the same decisions and a table test
// covers every one. Shaped after Mutagen's Reconcile(ancestor, alpha, beta): a 3-bit
// presence key first ('000'..'111' for base/local/remote), then hash comparisons, and every
// branch returns a named action. Conflicts are plan entries, never exceptions.

import type { Kind } from '../workspace/kinds.js'
import type { ConflictLeaf, Side } from './merge/merge-json.js'

export type Change = 'unchanged' | 'added' | 'modified' | 'deleted'

/**
 * What to do with one item. `publish` and `unpublish` are entries of their own beside the
 * item's write (publish-plan.ts), never the planner's decision for a path. `merge-base` touches only the state file: both sides already
 * agree (equal content, or both deleted), so the base moves to what they agree on. `merge`:
 * both sides changed different leaves; the run merged them (src/engine/merges.ts) and each
 * side gets the result. The planner itself never says `merge`: it decides on hashes, and the
 * run turns a both-changed `conflict` into `merge` when the leaves allow it.
 */
export type Action =
  | 'push'
  | 'pull'
  | 'delete-remote'
  | 'delete-local'
  | 'conflict'
  | 'merge'
  | 'merge-base'
  | 'none'
  | 'publish'
  | 'unpublish'

export type { Side }

/** One side of one item as the planner sees it: where it is and the hash of its canonical form. */
export interface Version {
  kind: Kind
  id: string
  path: string
  hash: string
}

/**
 * The base of one item. `alt` is a second base, where cms-sync.lock and the state file disagree
 * (null: one of them has no base for the item); see `decideTwice`.
 */
export interface BaseVersion extends Version {
  alt?: string | null
}

/** The connection a content item publishes through, as the item and its ancestors say (publish-plan.ts). */
export interface PublishRoute {
  /** The connection id; null when neither the item nor a governing parent names one. */
  connection: string | null
  /** The ancestor whose `settings.publishing.applyToChildren` decides it. */
  governedBy?: string
}

export interface PlanOptions {
  /** Settle conflicts in favour of this side (the loser is kept in trash by the executor). */
  prefer?: Side
}

export interface PlanItem {
  kind: Kind
  id: string
  path: string
  local: Change
  remote: Change
  action: Action
  /** Set when a conflict was settled by --prefer: the side that won. */
  settledFor?: Side
  /** Media moved or renamed: the path it had at the last sync. */
  from?: string
  /** The server's copy is inherited from its parent project (set by the run, not the planner). */
  inherited?: true
  /** A conflict of an item changed on both sides: the leaves both changed to different values. */
  leaves?: ConflictLeaf[]
  /** Why a both-changed item could not be merged (no base text, an invalid file, an invalid result). */
  reason?: string
  /** A write keeps the server's secrets (a secret conflict settled for the server: secret-leaves.ts). */
  keepServerSecrets?: true
  /** A publish or unpublish entry: the connection it goes through. */
  publishing?: PublishRoute
}

export interface Plan {
  items: PlanItem[]
}

type Decision = Pick<PlanItem, 'local' | 'remote' | 'action' | 'settledFor'>

/** The action that makes the preferred side win a conflict. */
function settle(local: Change, remote: Change, prefer: Side | undefined): Decision {
  if (!prefer) return { local, remote, action: 'conflict' }
  const winnerDeleted = prefer === 'local' ? local === 'deleted' : remote === 'deleted'
  const action: Action =
    prefer === 'local' ? (winnerDeleted ? 'delete-remote' : 'push') : winnerDeleted ? 'delete-local' : 'pull'
  return { local, remote, action, settledFor: prefer }
}

export function decide(
  base: string | undefined,
  local: string | undefined,
  remote: string | undefined,
  opts: PlanOptions = {},
): Decision {
  const presence = `${base === undefined ? 0 : 1}${local === undefined ? 0 : 1}${remote === undefined ? 0 : 1}`
  switch (presence) {
    case '001':
      // Only the server has it: new there (or a fresh clone that lacks it). Never a deletion.
      return { local: 'unchanged', remote: 'added', action: 'pull' }
    case '010':
      return { local: 'added', remote: 'unchanged', action: 'push' }
    case '011':
      // Both sides made it without a base (a fresh clone, or both added the same id).
      if (local === remote) return { local: 'added', remote: 'added', action: 'merge-base' }
      return settle('added', 'added', opts.prefer)
    case '100':
      return { local: 'deleted', remote: 'deleted', action: 'merge-base' }
    case '101': {
      const remoteChange: Change = remote === base ? 'unchanged' : 'modified'
      if (remoteChange === 'unchanged')
        return { local: 'deleted', remote: remoteChange, action: 'delete-remote' }
      return settle('deleted', remoteChange, opts.prefer)
    }
    case '110': {
      const localChange: Change = local === base ? 'unchanged' : 'modified'
      if (localChange === 'unchanged')
        return { local: localChange, remote: 'deleted', action: 'delete-local' }
      return settle(localChange, 'deleted', opts.prefer)
    }
    case '111': {
      const localChange: Change = local === base ? 'unchanged' : 'modified'
      const remoteChange: Change = remote === base ? 'unchanged' : 'modified'
      if (localChange === 'unchanged' && remoteChange === 'unchanged') {
        return { local: localChange, remote: remoteChange, action: 'none' }
      }
      if (remoteChange === 'unchanged') return { local: localChange, remote: remoteChange, action: 'push' }
      if (localChange === 'unchanged') return { local: localChange, remote: remoteChange, action: 'pull' }
      // Both edited: the same edit on both sides is agreement, not a conflict.
      if (local === remote) return { local: localChange, remote: remoteChange, action: 'merge-base' }
      return settle(localChange, remoteChange, opts.prefer)
    }
    default:
      throw new Error(`plan: an item present nowhere (${presence})`)
  }
}

/**
 * An item with two bases (the state's and the lock's, which git may have moved: a pull, a
 * checkout, a merge). Each is something both sides once held, so each gives a sound decision
 * about its own history. Where they agree, that is the decision; where one sees edits on both
 * sides (a conflict) and the other sees only one side moved, the other knows more (the edit
 * made after a `git pull` of what CI pushed); where they point opposite ways (push against pull,
 * a checkout of an older branch), nobody can tell which side is newer: a conflict. Never an
 * overwrite that either base would call one.
 */
export function decideTwice(
  base: string | undefined,
  alt: string | undefined,
  local: string | undefined,
  remote: string | undefined,
  opts: PlanOptions = {},
): Decision {
  // Gone from both sides (a teammate's delete pulled from git, a state restored from a backup
  // older than a delete): whichever base is right, nothing is left to sync, and the base goes.
  if (local === undefined && remote === undefined)
    return { local: 'deleted', remote: 'deleted', action: 'merge-base' }
  const first = decide(base, local, remote)
  const second = decide(alt, local, remote)
  if (first.action === second.action)
    return first.action === 'conflict' ? decide(base, local, remote, opts) : first
  // Both sides hold the same (or neither holds it): the base moves there, whatever it was.
  if (local === remote) return { ...first, action: 'merge-base' }
  if (second.action === 'conflict') return first
  if (first.action === 'conflict') return second
  return settle(first.local, first.remote, opts.prefer)
}

const WAYS_OUT = (path: string, file: string) =>
  `\`cms-sync resolve ${path} --keep local\` sends ${file} to the server; \`cms-sync restore ${path}\` takes the server's into the file`

/**
 * Why decideTwice found a conflict where each base alone sees one side moved, in opposite ways:
 * the one thing git can do that cms-sync cannot see. With the state's base (the last sync here)
 * the file moved; with the lock's (what git checked out) the server did: the lock is older than
 * the last sync here, as after `git checkout` of an older commit or another branch. The other
 * way round, the lock names a server version this workspace never synced (another clone's sync).
 */
function twoBasesReason(path: string, byState: Decision, byLock: Decision): string | undefined {
  if (byState.action === 'conflict' || byLock.action === 'conflict') return undefined
  const localMoved = (d: Decision) => d.local !== 'unchanged' && d.remote === 'unchanged'
  if (localMoved(byState) && !localMoved(byLock))
    return `the committed cms-sync.lock is older than the last sync here (a git checkout of an older commit or a branch switch): the file is that older version, the server still holds what was synced last. ${WAYS_OUT(path, 'the checked-out version')}`
  if (localMoved(byLock) && !localMoved(byState))
    return `cms-sync.lock names a server version this workspace never synced (a sync from another clone, brought by git), while the file is what was synced here last. ${WAYS_OUT(path, "the file's version")}`
  return undefined
}

export function plan(
  base: ReadonlyMap<string, BaseVersion>,
  local: ReadonlyMap<string, Version>,
  remote: ReadonlyMap<string, Version>,
  opts: PlanOptions = {},
): Plan {
  // One set grown in place: spreading three key lists of 100,000 paths each into arrays first
  // costs as much again in garbage.
  const union = new Set(base.keys())
  for (const path of local.keys()) union.add(path)
  for (const path of remote.keys()) union.add(path)
  const paths = [...union].sort()
  const items = paths.map((path): PlanItem => {
    const b = base.get(path)
    const l = local.get(path)
    const r = remote.get(path)
    const known = (b ?? l ?? r)!
    const decision =
      b?.alt !== undefined
        ? decideTwice(b.hash, b.alt ?? undefined, l?.hash, r?.hash, opts)
        : decide(b?.hash, l?.hash, r?.hash, opts)
    const why =
      decision.action === 'conflict' && b?.alt !== undefined
        ? twoBasesReason(path, decide(b.hash, l?.hash, r?.hash), decide(b.alt ?? undefined, l?.hash, r?.hash))
        : undefined
    return { kind: known.kind, id: known.id, path, ...decision, ...(why ? { reason: why } : {}) }
  })
  return { items }
}

/** Both sides edited the item since a known base: what the run tries to merge leaf by leaf. */
export function bothModified(item: PlanItem): boolean {
  return item.local === 'modified' && item.remote === 'modified' && item.action !== 'merge-base'
}

/** The items that need attention: everything but `none`, and `merge-base` which is silent. */
export function changesOf(result: Plan): PlanItem[] {
  return result.items.filter((item) => item.action !== 'none' && item.action !== 'merge-base')
}
