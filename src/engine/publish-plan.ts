// Which plan entries carry out publishing (design.md "Publishing"). Pure, like plan.ts: given
// what an item's entry writes and what the server and the state say of its `isPublished`, it
// names the publish or unpublish that follows, as an entry of its own. The server publishes
// through `POST P/content/publish|unpublish`, which deploys the item through its connection
// and then writes it again; a plain write of `isPublished` deploys nothing, so a change of the
// flag in a file is carried out with those requests, and a write of an item that stays
// published deploys it again, as the CMS's editor does on every save (`publishing: auto`).
// `publishing: manual` (or --no-publish) leaves deployment to people: no publish or unpublish
// is planned, and `isPublished` is written as the field it is.

import type { PlanItem, PublishRoute } from './plan.js'

export type { PublishRoute } from './plan.js'

export type Publishing = 'auto' | 'manual'
export type PublishVerb = 'publish' | 'unpublish'

/** What is known of one content item's `isPublished`. */
export interface PublishFacts {
  /** The server's flag as listed before the run; undefined when the server lacks the item. */
  remote?: boolean
  /** The flag the entry's write leaves on the server (a push's file, a merge); undefined: no write. */
  written?: boolean
  /** The state says the deployed copy is behind: a publish or unpublish still to do. */
  pending?: PublishVerb
}

/** The entry's writes to the server: a push, or a merge (whose server half a command may skip). */
const WRITES = new Set<PlanItem['action']>(['push', 'merge'])
/**
 * Entries after which the file, the base and the server copy are one, so a deployment still owed
 * can be retried with the server's copy (a pull is not: the push command that retries would
 * take the server's copy as the base before the file has it).
 */
const KEEPS_SERVER = new Set<PlanItem['action']>(['none', 'merge-base'])

/**
 * The publish or unpublish an entry of a kind that publishes (Codec.publishes) brings, if any
 * (none at all under `manual`):
 * - a write that turns the flag on publishes, one that turns it off unpublishes;
 * - a write of an item that was and stays published publishes again;
 * - a remote delete of a published item unpublishes it first;
 * - an item the run leaves as the server holds it gets the deployment the state says is owed,
 *   if the server's flag still asks for it.
 */
export function publishVerbOf(
  item: PlanItem,
  facts: PublishFacts,
  mode: Publishing,
): PublishVerb | undefined {
  if (mode === 'manual') return undefined
  const before = facts.remote === true
  if (WRITES.has(item.action) && facts.written !== undefined) {
    const after = facts.written
    if (after !== before) return after ? 'publish' : 'unpublish'
    if (after) return 'publish'
    return facts.pending === 'unpublish' ? 'unpublish' : undefined
  }
  if (item.action === 'delete-remote') return before ? 'unpublish' : undefined
  if (KEEPS_SERVER.has(item.action) && facts.remote !== undefined) {
    if (facts.pending === 'publish' && before) return 'publish'
    if (facts.pending === 'unpublish' && !before) return 'unpublish'
  }
  return undefined
}

/** The content fields publishing reads, by id, as the run leaves them. */
export type ContentById = (id: string) => { parentId?: unknown; settings?: unknown } | undefined

/**
 * The server's rule (Content.getSettings): the nearest ancestor whose publishing settings have
 * `applyToChildren` decides; else the item's own settings. The server does not cascade publishes:
 * it only looks the connection up this way for the item being published.
 */
export function publishRouteOf(id: string, byId: ContentById): PublishRoute {
  const own = byId(id)
  const seen = new Set<string>([id])
  let parentId = own?.parentId
  while (typeof parentId === 'string' && parentId !== '' && !seen.has(parentId)) {
    seen.add(parentId)
    const parent = byId(parentId)
    if (!parent) break
    const publishing = publishingOf(parent.settings)
    if (publishing?.applyToChildren) return { connection: connectionIdOf(publishing), governedBy: parentId }
    parentId = parent.parentId
  }
  return { connection: connectionIdOf(publishingOf(own?.settings)) }
}

function publishingOf(settings: unknown): Record<string, unknown> | undefined {
  if (typeof settings !== 'object' || settings === null) return undefined
  const publishing = (settings as Record<string, unknown>).publishing
  return typeof publishing === 'object' && publishing !== null
    ? (publishing as Record<string, unknown>)
    : undefined
}

function connectionIdOf(publishing: Record<string, unknown> | undefined): string | null {
  const id = publishing?.connectionId
  return typeof id === 'string' && id !== '' ? id : null
}

/** The plan entry of a publish or unpublish that follows (or, for a delete, precedes) `item`. */
export function publishEntry(item: PlanItem, verb: PublishVerb, route: PublishRoute): PlanItem {
  return {
    kind: item.kind,
    id: item.id,
    path: item.path,
    local: item.local,
    remote: item.remote,
    action: verb,
    publishing: route,
    // resolve --keep local carries out the settled push, and so the publish that goes with it.
    ...(item.settledFor ? { settledFor: item.settledFor } : {}),
    ...(item.inherited ? { inherited: true as const } : {}),
  }
}

/** Why a publish cannot go through, known before it is sent; undefined when it can. */
export function publishBlocked(entry: Pick<PlanItem, 'path' | 'action' | 'publishing'>): string | undefined {
  if (!entry.publishing || entry.publishing.connection !== null) return undefined
  return `no connection to ${entry.action} through: neither ${entry.path} (settings.publishing.connectionId) nor a parent whose settings.publishing has applyToChildren names one`
}
