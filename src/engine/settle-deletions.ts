// `resolve --keep <side>` on a deletion a guard holds (held.ts): keeping the side that deleted
// carries the deletion out; keeping the other side brings the item back there (the server's
// copy to the file, or the file's copy to the server). Either way it is the user's explicit
// choice for these paths, as with a conflict, so the delete guard does not apply.

import type { PlanItem, Side } from './plan.js'
import { inScope } from './plan-apply-types.js'

/** Which deletions a resolve settles, and for which side. */
export interface SettleDeletions {
  scope: readonly string[]
  keep: Side
}

/** Marks, in place, the deletions under `scope` as settled for `keep`. Returns them. */
export function settleDeletions(items: PlanItem[], scope: readonly string[], keep: Side): PlanItem[] {
  const settled: PlanItem[] = []
  for (const item of items) {
    if (item.settledFor !== undefined || !inScope(item.path, scope)) continue
    if (item.action === 'delete-local') {
      // Deleted on the server, unchanged here: keeping the file puts it back on the server.
      if (keep === 'local') item.action = 'push'
    } else if (item.action === 'delete-remote') {
      // Deleted here, unchanged on the server: keeping the server's copy brings the file back.
      if (keep === 'remote') item.action = 'pull'
    } else continue
    item.settledFor = keep
    settled.push(item)
  }
  return settled
}
