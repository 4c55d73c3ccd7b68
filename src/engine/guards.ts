// Safety guards: plain predicates over the plan (after Mutagen's safety.go and rclone's
// excessDeletes). Each returns ok or the numbers behind a stop; the command prints them and
// exits 4 before anything is changed.

import { sameTarget, type Target } from '../state/state-file.js'
import type { Kind } from '../workspace/kinds.js'
import type { PlanItem } from './plan.js'

export type GuardResult =
  | { ok: true }
  | {
      ok: false
      reason: 'max-delete'
      kind: Kind
      deleting: number
      of: number
      maxPercent: number
      maxDeletes: number
    }
  | { ok: false; reason: 'listing-emptied'; kind: Kind; had: number }
  | { ok: false; reason: 'wrong-target'; bound: Target; configured: Target }
  | { ok: false; reason: 'inheritance-lost'; had: number }
  | { ok: false; reason: 'form-entries'; forms: { path: string; entries: number }[] }
  | { ok: false; reason: 'orphans'; parents: { path: string; children: string[] }[] }

export type GuardStop = Exclude<GuardResult, { ok: true }>

function countByKind(items: Iterable<{ kind: Kind }>): Map<Kind, number> {
  const counts = new Map<Kind, number>()
  for (const item of items) counts.set(item.kind, (counts.get(item.kind) ?? 0) + 1)
  return counts
}

/**
 * What the guards need of the base: per kind how many items are synced, and which are inherited.
 * The state keeps these counts as it changes (StateStore), so a run that deletes nothing, or
 * one file, pays for its selection only, not for a walk over every synced item.
 */
export interface BaseCounts {
  countOf(kind: Kind): number
  /** How many synced items the server lists from the parent project. */
  readonly inheritedCount: number
  isInherited(path: string): boolean
}

/** The counts of a list of base items (what StateStore keeps up to date for a run). */
export function countBase(items: Iterable<{ kind: Kind; path?: string; inherited?: true }>): BaseCounts {
  const list = [...items]
  const byKind = countByKind(list)
  const inherited = new Set(list.filter((item) => item.inherited).map((item) => item.path))
  return {
    countOf: (kind) => byKind.get(kind) ?? 0,
    inheritedCount: inherited.size,
    isInherited: (path) => inherited.has(path),
  }
}

const isDelete = (item: PlanItem) => item.action === 'delete-local' || item.action === 'delete-remote'

/** safety.maxDeletes when cms-sync.yaml does not say. */
export const DEFAULT_MAX_DELETES = 20

/**
 * Deleting maxPercent of a kind's synced items or more, or more than maxDeletes of them, in one
 * run needs --allow-deletes. Both sides count: a listing that shrank (local deletes) and files
 * gone from a bad checkout (remote deletes). The share stops at exactly half too (a listing cut
 * in two is the classic broken page); one deletion alone is an edit (unless it is the kind's last item).
 */
export function deleteGuard(
  selected: readonly PlanItem[],
  base: BaseCounts,
  opts: { maxDeletePercent: number; maxDeletes?: number; allowDeletes: boolean },
): GuardResult {
  if (opts.allowDeletes) return { ok: true }
  const maxDeletes = opts.maxDeletes ?? DEFAULT_MAX_DELETES
  for (const [kind, deleting] of countByKind(selected.filter(isDelete))) {
    const of = base.countOf(kind)
    const alone = deleting === 1 && of > 1 && opts.maxDeletePercent > 0
    const share = !alone && deleting * 100 >= of * opts.maxDeletePercent
    if (share || deleting > maxDeletes) {
      return {
        ok: false,
        reason: 'max-delete',
        kind,
        deleting,
        of,
        maxPercent: opts.maxDeletePercent,
        maxDeletes,
      }
    }
  }
  return { ok: true }
}

/**
 * A listing that comes back empty for a kind we had synced items of is far more often a
 * broken server or a wrong token (upstream answers anonymous reads) than a real wipe: it may
 * not turn into local deletions unless --allow-deletes says so. The listing is counted only
 * when the run deletes locally an item of a kind it had.
 */
export function listingGuard(
  selected: readonly PlanItem[],
  base: BaseCounts,
  remote: Iterable<{ kind: Kind }>,
  opts: { allowDeletes: boolean },
): GuardResult {
  if (opts.allowDeletes) return { ok: true }
  let listed: Map<Kind, number> | undefined
  for (const item of selected) {
    if (item.action !== 'delete-local') continue
    const count = base.countOf(item.kind)
    if (count === 0) continue
    listed ??= countByKind(remote)
    if ((listed.get(item.kind) ?? 0) === 0)
      return { ok: false, reason: 'listing-emptied', kind: item.kind, had: count }
  }
  return { ok: true }
}

/**
 * Items inherited from a parent project that all vanish from the listing at once mean the
 * server stopped inheriting (upstream switches its own sync off after one failed read of the
 * parent, §9), not that the parent deleted them: no local deletions without --allow-deletes.
 * The listing is looked at only when the run deletes locally an item that was inherited.
 */
export function inheritanceGuard(
  selected: readonly PlanItem[],
  base: BaseCounts,
  remote: Iterable<{ inherited: boolean }>,
  opts: { allowDeletes: boolean },
): GuardResult {
  if (opts.allowDeletes) return { ok: true }
  const deleting = selected.some((item) => item.action === 'delete-local' && base.isInherited(item.path))
  if (!deleting) return { ok: true }
  for (const entry of remote) if (entry.inherited) return { ok: true }
  return { ok: false, reason: 'inheritance-lost', had: base.inheritedCount }
}

/**
 * Deleting a form deletes its entries with it: people's submissions, in no file. A form file
 * gone by hand or by a `git checkout` under watch must not take them along unasked, so a run
 * that would delete a form holding entries needs --allow-deletes, however few it deletes (the
 * entries are exported to trash before any form delete, allowed or not).
 */
export function formEntriesGuard(
  withEntries: readonly { path: string; entries: number }[],
  opts: { allowDeletes: boolean },
): GuardResult {
  if (opts.allowDeletes || withEntries.length === 0) return { ok: true }
  return { ok: false, reason: 'form-entries', forms: [...withEntries] }
}

/**
 * A content delete on the server that would leave children behind (orphans.ts): the server sets
 * their parentId to null, flattening the tree for good. Refused, whatever --allow-deletes says,
 * unless the same run deletes or moves those children: it is not a question of how many.
 */
export function orphanGuard(orphaning: ReadonlyMap<string, readonly string[]>): GuardResult {
  if (orphaning.size === 0) return { ok: true }
  const parents = [...orphaning].map(([path, children]) => ({ path, children: [...children] }))
  return { ok: false, reason: 'orphans', parents }
}

/** How a parent delete that would orphan children is told (the stop, and status beside the item). */
export function describeOrphaning(path: string, children: readonly string[]): string {
  const named = children.slice(0, USERS_NAMED).join(', ')
  const more = children.length > USERS_NAMED ? ` and ${children.length - USERS_NAMED} more` : ''
  return `deleting ${path} on the server would leave its children without a parent (the server moves them to the root): ${named}${more}`
}

/** A workspace bound to one server/project/environment never syncs with another until --rebind. */
export function targetGuard(bound: Target | undefined, configured: Target, rebind: boolean): GuardResult {
  if (!bound || rebind || sameTarget(bound, configured)) return { ok: true }
  return { ok: false, reason: 'wrong-target', bound, configured }
}

/** The flag a stop's message tells to re-run with, in those words ("re-run with --allow-deletes"). */
export function rerunFlag(stop: GuardStop): string | undefined {
  switch (stop.reason) {
    case 'max-delete':
    case 'listing-emptied':
    case 'inheritance-lost':
    case 'form-entries':
      return '--allow-deletes'
    default:
      return undefined
  }
}

export function describeStop(stop: GuardStop): string {
  switch (stop.reason) {
    case 'max-delete':
      return `safety stop: this run would delete ${stop.deleting} of ${stop.of} ${stop.kind} items (a run may delete less than ${stop.maxPercent}% of a kind and at most ${stop.maxDeletes} items: safety.maxDeletePercent, safety.maxDeletes); nothing was changed. Check with \`cms-sync status\`, then re-run with --allow-deletes if that is intended`
    case 'listing-emptied':
      return `safety stop: the server listed no ${stop.kind} items although ${stop.had} were synced; nothing was changed. If they really were all deleted, re-run with --allow-deletes`
    case 'inheritance-lost':
      return `safety stop: the server no longer lists any of the ${stop.had} items it inherited from its parent project, so its sync with the parent is probably off (see \`cms-sync doctor\`); nothing was changed. If the inheritance really ended, re-run with --allow-deletes`
    case 'form-entries': {
      const forms = stop.forms
        .map((f) => `${f.path} (${f.entries} entr${f.entries === 1 ? 'y' : 'ies'})`)
        .join(', ')
      return `safety stop: this run would delete forms that hold entries, and the entries with them: ${forms}; nothing was changed. Export them with \`cms-sync entries <formId>\` or restore the file; re-run with --allow-deletes to delete (the entries are kept in .cms-sync/trash/ first)`
    }
    case 'orphans': {
      const parents = stop.parents.map((p) => describeOrphaning(p.path, p.children)).join('; ')
      return `safety stop: ${parents}; nothing was changed. Delete those children or move them under another parent in the same run, or bring the parent's file back (--allow-deletes does not lift this)`
    }
    case 'wrong-target': {
      const show = (t: Target) => `${t.server} ${t.project}/${t.environment}`
      return `safety stop: this workspace is bound to ${show(stop.bound)}, but cms-sync.yaml names ${show(stop.configured)}; nothing was changed. Re-run with --rebind to sync with the new target`
    }
  }
}

/**
 * A file renamed by hand (`mv content/a.json content/b.json`) still says `id: "a"`: the item is
 * not gone, only its file name changed. Deleting "a" on the server would lose it there while
 * b.json cannot be pushed (its id does not match its name), so such deletes are held, with a
 * message saying how to settle it. Returns the held deletes' paths and why.
 */
export function deletesHeldByRenamedFiles(
  selected: readonly PlanItem[],
  local: Iterable<{ kind: Kind; path: string; claimsId?: string }>,
): Map<string, string> {
  const claimedBy = new Map<string, string>()
  for (const entry of local) {
    if (entry.claimsId !== undefined) claimedBy.set(`${entry.kind}\0${entry.claimsId}`, entry.path)
  }
  const held = new Map<string, string>()
  for (const item of selected) {
    if (item.action !== 'delete-remote') continue
    const claimant = claimedBy.get(`${item.kind}\0${item.id}`)
    if (claimant === undefined) continue
    held.set(
      item.path,
      `not deleted on the server: ${claimant} still says id ${JSON.stringify(item.id)} (a renamed file?); ` +
        `rename it back to ${item.path}, or give it the id its name stands for`,
    )
  }
  return held
}

/** How many users a held schema delete names before "and N more". */
const USERS_NAMED = 5

/** What an item names once the run is done (Codec.uses): by its kind, the named item's kind and id. */
export interface UseAfterRun {
  by: Kind
  kind: Kind
  id: string
}

/**
 * An item deleted while others still name it (a schema its content uses, Codec.uses): the server
 * takes the delete and leaves them pointing at nothing, so they can never be pushed again. Such
 * deletes are held unless the same run deletes those items or makes them name another (their
 * writes go before the deletes, execute.ts). `usesAfterRun` gives, per path of an item that
 * names another, what it names once the run's pushes and deletes are done (undefined: gone).
 * Returns the held deletes' paths and why.
 */
export function deletesHeldByUse(
  selected: readonly PlanItem[],
  usesAfterRun: ReadonlyMap<string, UseAfterRun | undefined>,
): Map<string, string> {
  const held = new Map<string, string>()
  const deleting = selected.filter((item) => item.action === 'delete-remote')
  if (deleting.length === 0) return held
  const users = new Map<string, { by: Kind; paths: string[] }>()
  for (const [path, use] of usesAfterRun) {
    if (use === undefined) continue
    const key = `${use.kind}/${use.id}`
    users.set(key, { by: use.by, paths: [...(users.get(key)?.paths ?? []), path] })
  }
  for (const item of deleting) {
    const found = users.get(`${item.kind}/${item.id}`)
    if (!found) continue
    const using = found.paths.sort()
    const named = using.slice(0, USERS_NAMED).join(', ')
    const more = using.length > USERS_NAMED ? ` and ${using.length - USERS_NAMED} more` : ''
    held.set(
      item.path,
      `not deleted on the server: the ${item.kind} is still used by ${named}${more}; ` +
        `delete that ${found.by} or give it another ${item.kind} in the same run, or bring ${item.path} back`,
    )
  }
  return held
}
