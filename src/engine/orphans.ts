// A content item (any kind the server holds as a tree: Codec.parentField) deleted on the server
// while it still has children: the server does not refuse it, it sets every child's parentId to
// null, so the tree is flattened without a word and bringing the parent's file back does not put
// the children under it again. Such a delete is allowed only when the same run deletes those
// children too or moves them under another parent (content writes go before deletes,
// execute.ts). Read only by runs that delete such items there.

import { readFile } from 'node:fs/promises'
import type { Codec, JsonObject } from '../workspace/codec.js'
import type { Kind } from '../workspace/kinds.js'
import { absolute, itemPath } from '../workspace/layout.js'
import type { PlanItem } from './plan.js'
import type { EngineDeps, PlannedRun } from './plan-apply-types.js'

/**
 * Per path of the kind, the parent id the server will hold for it once the chosen writes and
 * deletes are done (undefined: at the root, or gone). An edit-only run (watch's batches) read
 * only its own paths from the server: the kind's listing is read once here for the rest.
 */
async function parentsAfterRun(
  deps: Pick<EngineDeps, 'root' | 'client'>,
  run: Pick<PlannedRun, 'remote' | 'fresh'>,
  chosen: readonly PlanItem[],
  codec: Codec,
): Promise<Map<string, string | undefined>> {
  const after = new Map<string, string | undefined>()
  const listed: [string, JsonObject][] = []
  if (run.fresh) {
    for (const object of await deps.client.list(codec.kind)) {
      const path = pathOf(codec.kind, String(object.id))
      if (path !== undefined) listed.push([path, object])
    }
  }
  for (const entry of run.remote.values())
    if (entry.kind === codec.kind) listed.push([entry.path, entry.object])
  for (const [path, object] of listed) after.set(path, codec.parentOf(object))
  for (const item of chosen) {
    if (item.kind !== codec.kind) continue
    if (item.action === 'delete-remote') after.set(item.path, undefined)
    if (item.action !== 'push') continue
    try {
      after.set(item.path, codec.parentOf(JSON.parse(await readFile(absolute(deps.root, item.path), 'utf8'))))
    } catch {
      // Unreadable or not JSON: it will not be pushed, so the server keeps what it has.
    }
  }
  return after
}

/** The chosen deletes on the server that would leave children behind: parent path -> children's paths. */
export async function orphaningDeletes(
  deps: Pick<EngineDeps, 'root' | 'client' | 'codecs'>,
  run: Pick<PlannedRun, 'remote' | 'fresh'>,
  chosen: readonly PlanItem[],
): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>()
  // Only the kinds the server holds as a tree (Codec.parentField) flatten children this way.
  for (const codec of deps.codecs) {
    if (codec.parentField === undefined) continue
    const deleting = chosen.filter((item) => item.kind === codec.kind && item.action === 'delete-remote')
    if (deleting.length === 0) continue
    const childrenOf = new Map<string, string[]>()
    for (const [path, parent] of await parentsAfterRun(deps, run, chosen, codec)) {
      if (parent === undefined) continue
      childrenOf.set(parent, [...(childrenOf.get(parent) ?? []), path])
    }
    for (const item of deleting) {
      const children = childrenOf.get(item.id)
      if (children?.length) found.set(item.path, children.sort())
    }
  }
  return found
}

function pathOf(kind: Kind, id: string): string | undefined {
  try {
    return itemPath(kind, id)
  } catch {
    return undefined
  }
}
