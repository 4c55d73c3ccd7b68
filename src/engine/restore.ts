// `cms-sync restore`: drop local edits. The plan's local-side actions for the named paths turn
// into the server's side (design.md: "the file gets the server copy (the edit goes to trash)"),
// marked as settled for the remote so the executor keeps the dropped version in trash, exactly
// as it does for `resolve --keep remote`. The server is never written to.

import type { PlanItem } from './plan.js'
import { inScope } from './plan-apply-types.js'

/** Whether the server holds the item (the planner's Change pairs for "absent on the server"). */
function onServer(item: PlanItem): boolean {
  return !(item.remote === 'deleted' || (item.local === 'added' && item.remote === 'unchanged'))
}

/**
 * Rewrites, in place, the entries under `scope` that carry a local edit (a push, a remote
 * delete, or a conflict settled for the remote) into the pull or local delete that restores
 * the server copy. Returns the rewritten entries.
 */
export function restoreLocalEdits(items: PlanItem[], scope: readonly string[]): PlanItem[] {
  const restored: PlanItem[] = []
  for (const item of items) {
    if (!inScope(item.path, scope)) continue
    const localEdit =
      item.action === 'push' ||
      item.action === 'delete-remote' ||
      item.action === 'conflict' ||
      item.settledFor === 'remote'
    if (!localEdit || item.local === 'unchanged') continue
    item.action = onServer(item) ? 'pull' : 'delete-local'
    item.settledFor = 'remote'
    restored.push(item)
  }
  return restored
}
