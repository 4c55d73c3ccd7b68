// Adds the publish and unpublish entries to a planned run (publish-plan.ts decides them) for the
// kinds that publish (Codec.publishes: content): reads what each of their writes leaves as
// `isPublished` (the file of a push, the server half of a merge), and the connection each
// publish goes through as the run leaves the items.

import type { StateStore } from '../state/state-file.js'
import type { Codec, JsonObject } from '../workspace/codec.js'
import type { Kind } from '../workspace/kinds.js'
import { readLocalFile } from '../workspace/local-file.js'
import type { LocalEntry } from '../workspace/scan.js'
import type { PlannedMerge } from './merges.js'
import type { PlanItem } from './plan.js'
import { type Publishing, publishEntry, publishRouteOf, publishVerbOf } from './publish-plan.js'
import type { RemotePort } from './remote-port.js'
import { hasServerObject, type RemoteEntry } from './remote-snapshot.js'

export interface PublishSides {
  root: string
  /** Reads an ancestor an edit-only run did not read (its connection may govern the item's). */
  client: Pick<RemotePort, 'get'>
  codecs: readonly Codec[]
  store: StateStore
  local: ReadonlyMap<string, LocalEntry>
  remote: ReadonlyMap<string, RemoteEntry>
  merges: ReadonlyMap<string, PlannedMerge>
  mode: Publishing
}

/** The plan's items with each publish after its item's entry, and each unpublish before a delete. */
export async function withPublishEntries(
  items: readonly PlanItem[],
  sides: PublishSides,
): Promise<PlanItem[]> {
  const publishing = new Map(sides.codecs.filter((c) => c.publishes).map((c) => [c.kind, c]))
  const published = items.filter((item) => publishing.has(item.kind))
  if (published.length === 0) return [...items]
  // What the run leaves on the server per kind and id: the files it pushes, else the listing.
  // Taken when the first entry needs it: a run with nothing to publish reads no server object
  // (a listing answered 304 has none: remote-snapshot.ts).
  const files = new Map<Kind, Map<string, JsonObject>>(
    [...publishing.keys()].map((kind) => [kind, new Map()]),
  )
  let after: Map<Kind, Map<string, JsonObject>> | undefined
  const afterRun = () => {
    if (after) return after
    after = new Map([...publishing.keys()].map((kind) => [kind, new Map()]))
    // A base standing for its unchanged server item holds no object: read by id if needed below.
    for (const entry of sides.remote.values())
      if (hasServerObject(entry)) after.get(entry.kind)?.set(entry.id, entry.object)
    for (const [kind, byId] of files) for (const [id, file] of byId) after.get(kind)!.set(id, file)
    return after
  }
  const written = new Map<string, boolean>()
  for (const item of published) {
    const file = await writtenFile(item, publishing.get(item.kind)!, sides)
    if (!file) continue
    files.get(item.kind)!.set(item.id, file)
    written.set(item.path, file.isPublished === true)
  }
  const out: PlanItem[] = []
  for (const item of items) {
    // Nothing to do and no deploy pending: no verb, whatever the server's flag says.
    if (item.action === 'none' && !pendingOf(sides.store, item.path).pending) {
      out.push(item)
      continue
    }
    const verb = publishing.has(item.kind)
      ? publishVerbOf(
          item,
          {
            ...remoteFlag(sides.remote.get(item.path)),
            ...(written.has(item.path) ? { written: written.get(item.path)! } : {}),
            ...pendingOf(sides.store, item.path),
          },
          sides.mode,
        )
      : undefined
    if (!verb) {
      out.push(item)
      continue
    }
    const known = afterRun().get(item.kind)!
    await readAncestors(item, known, sides.client)
    const entry = publishEntry(
      item,
      verb,
      publishRouteOf(item.id, (id) => known.get(id)),
    )
    if (item.action === 'delete-remote') out.push(entry, item)
    else out.push(item, entry)
  }
  return out
}

/**
 * The item's ancestors the run has not read, read by id: an edit-only run (watch) holds only the
 * items it plans, and a parent's `applyToChildren` decides the connection its children use.
 */
async function readAncestors(
  item: PlanItem,
  known: Map<string, JsonObject>,
  client: Pick<RemotePort, 'get'>,
): Promise<void> {
  const seen = new Set([item.id])
  let parentId = known.get(item.id)?.parentId
  while (typeof parentId === 'string' && parentId !== '' && !seen.has(parentId)) {
    seen.add(parentId)
    let parent = known.get(parentId)
    if (!parent) {
      parent = await client.get(item.kind, parentId)
      if (!parent) return
      known.set(parentId, parent)
    }
    parentId = parent.parentId
  }
}

function remoteFlag(entry: RemoteEntry | undefined): { remote?: boolean } {
  return entry ? { remote: entry.object.isPublished === true } : {}
}

function pendingOf(store: StateStore, path: string): { pending?: 'publish' | 'unpublish' } {
  const pending = store.get(path)?.deploy
  return pending ? { pending } : {}
}

/** The item as the entry writes it to the server, when it writes one. */
async function writtenFile(
  item: PlanItem,
  codec: Codec,
  sides: PublishSides,
): Promise<JsonObject | undefined> {
  if (item.action === 'merge') {
    const merge = sides.merges.get(item.path)
    // A merge with leaves still in conflict is not deployed: its publish comes with the merge that settles it.
    return merge?.settled && merge.remote.hash !== merge.before.remote.hash ? merge.remote.file : undefined
  }
  if (item.action !== 'push' || !sides.local.has(item.path)) return undefined
  const parsed = await readLocalFile(sides.root, item.path, codec, item.id)
  return parsed?.ok ? parsed.file : undefined
}
