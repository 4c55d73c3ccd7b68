// What a guard holds instead of stopping everything (design.md "Safety guards": a guard holds
// only what it is about). A one-shot command stops with exit 4 when a guard trips; `watch` runs
// on, carries out everything else and keeps these changes waiting, and `status`, `doctor` and
// watch's events show them in this one shape, with the command that releases them and the one
// that drops them. `status` finds them by running the same guards over the same plan
// (`heldByGuards`), so what it shows is what the daemon holds.

import type { Kind } from '../workspace/kinds.js'
import type { GuardStop } from './guards.js'
import type { PlanItem } from './plan.js'

/** What holds a change: one of the guards every run applies, or watch's pause (mass-change.ts). */
export type HeldGuard =
  | 'max-delete'
  | 'listing-emptied'
  | 'inheritance-lost'
  | 'form-entries'
  | 'orphans'
  | 'mass-change'
  | 'mass-delete'
  | 'branch-switch'

export interface HeldChange {
  guard: HeldGuard
  /** Whose change waits: the server's (not carried out in the files) or the workspace's (not pushed). */
  side: 'remote' | 'local'
  /** The kind it is about, when it is about one. */
  kind?: Kind
  /** What carrying the change out would do to each path. */
  action: 'delete-local' | 'delete-remote' | 'push'
  /** The paths held, sorted (for a pause, those it saw, at most a sample). */
  paths: string[]
  /** How many changes are held (a pause may hold more than it names). */
  count: number
  /** One line: what was seen and why it waits. */
  reason: string
  /** The command that carries the held changes out. */
  release: string
  /** The command that gives them up, bringing back what they would change. */
  drop: string
  /** When it was first held (ISO), when known. */
  since?: string
}

/** Paths quoted for a shell only where they need it. */
export function shellPaths(paths: readonly string[]): string {
  return paths.map((p) => (/^[\w./@+-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`)).join(' ')
}

const isDelete = (item: PlanItem) => item.action === 'delete-local' || item.action === 'delete-remote'

/** The selected items a guard's stop is about: those it would hold. */
export function itemsStoppedBy(
  stop: GuardStop,
  selected: readonly PlanItem[],
  isInherited: (path: string) => boolean,
): PlanItem[] {
  switch (stop.reason) {
    case 'max-delete':
      return selected.filter((item) => item.kind === stop.kind && isDelete(item))
    case 'listing-emptied':
      return selected.filter((item) => item.kind === stop.kind && item.action === 'delete-local')
    case 'inheritance-lost':
      return selected.filter((item) => item.action === 'delete-local' && isInherited(item.path))
    case 'form-entries': {
      const forms = new Set(stop.forms.map((f) => f.path))
      return selected.filter((item) => item.action === 'delete-remote' && forms.has(item.path))
    }
    case 'orphans': {
      const parents = new Set(stop.parents.map((p) => p.path))
      return selected.filter((item) => item.action === 'delete-remote' && parents.has(item.path))
    }
    case 'wrong-target':
      return []
  }
}

function whyHeld(stop: GuardStop, count: number, side: HeldChange['side']): string {
  const where = side === 'remote' ? 'deleted on the server' : 'deleted in the workspace'
  switch (stop.reason) {
    case 'max-delete':
      return `${count} ${stop.kind} item${count === 1 ? '' : 's'} ${where} (this run would delete ${stop.deleting} of ${stop.of}; a run may delete less than ${stop.maxPercent}% of a kind and at most ${stop.maxDeletes} items: safety.maxDeletePercent, safety.maxDeletes)`
    case 'listing-emptied':
      return `the server listed no ${stop.kind} items although ${stop.had} were synced: ${count} local deletion${count === 1 ? '' : 's'} held (a broken server or a wrong token far more often than a real wipe)`
    case 'inheritance-lost':
      return `the server no longer lists any of the ${stop.had} items it inherited from its parent project (its sync with the parent is probably off, see \`cms-sync doctor\`): ${count} local deletion${count === 1 ? '' : 's'} held`
    case 'form-entries':
      return `${count} form${count === 1 ? '' : 's'} ${where} that hold entries (people's submissions, deleted with the form; they are kept in .cms-sync/trash/ first)`
    case 'orphans': {
      const children = stop.parents.flatMap((p) => p.children)
      return `${count} content item${count === 1 ? '' : 's'} ${where} that still ha${count === 1 ? 's' : 've'} children on the server (${children.slice(0, 5).join(', ')}${children.length > 5 ? ', ...' : ''}): the server would move them to the root`
    }
    case 'wrong-target':
      return 'the workspace is bound to another target'
  }
}

/**
 * The held changes for the items a stop is about, one per side. The commands work with or
 * without `watch` running (the daemon carries out `resolve` and `restore`).
 */
export function heldChanges(stop: GuardStop, items: readonly PlanItem[]): HeldChange[] {
  const out: HeldChange[] = []
  for (const action of ['delete-local', 'delete-remote'] as const) {
    const paths = items
      .filter((item) => item.action === action)
      .map((item) => item.path)
      .sort()
    if (paths.length === 0) continue
    const side = action === 'delete-local' ? 'remote' : 'local'
    const named = shellPaths(paths)
    const kinds = new Set(items.filter((item) => item.action === action).map((item) => item.kind))
    out.push({
      guard: stop.reason as HeldGuard,
      side,
      ...(kinds.size === 1 ? { kind: [...kinds][0]! } : {}),
      action,
      paths,
      count: paths.length,
      reason: whyHeld(stop, paths.length, side),
      // The server deleted them: keep the deletion here, or put the local copies back there.
      // The workspace deleted them: delete them on the server too, or bring the files back.
      // An orphaning delete goes only with its children: no command lifts that guard alone.
      release:
        stop.reason === 'orphans'
          ? 'delete the children too, or move them under another parent, in the same push'
          : side === 'remote'
            ? `cms-sync resolve --keep remote ${named}`
            : `cms-sync resolve --keep local ${named}`,
      drop: side === 'remote' ? `cms-sync resolve --keep local ${named}` : `cms-sync restore ${named}`,
    })
  }
  return out
}

/** One line on a held change, for the terminal (status, doctor, watch). */
export function describeHeld(held: HeldChange): string {
  const sample = held.paths.slice(0, 3).join(', ')
  const more = held.count > 3 ? `, and ${held.count - 3} more` : ''
  return `held: ${held.reason}${sample ? ` (${sample}${more})` : ''}`
}

/** The two commands, for the terminal (status, doctor, watch). */
export function describeHeldCommands(held: HeldChange): string {
  return `to carry them out: \`${held.release}\`; to drop them: \`${held.drop}\``
}
