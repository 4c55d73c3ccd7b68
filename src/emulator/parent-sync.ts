// The server's own Sync feature (§9): a project whose settings say `sync: {enabled, url, token,
// project}` inherits from that project on another instance. Lists merge the parent's items
// (remote-only first, locked and flagged), by-id reads fall back to the parent, and pull/push
// copy single items across. The parent is reached over HTTP with the token in the query
// string, as upstream does. What differs per dialect (disabling sync on a failed read, the
// schema list's customOnly) is read from the dialect table.

import type { Ctx } from './context.js'
import { isObj, type Obj } from './entities.js'
import { HttpError } from './http.js'
import { isNativeSchema } from './native-schemas.js'
import { Projects } from './projects.js'

export type SyncedKind = 'content' | 'schemas' | 'connections' | 'forms'
type Resource = SyncedKind | 'media/tree'

export type Parent = { origin: string; token: string; project: string }

/** The parent this request's project inherits from, or undefined when sync is off or incomplete. */
export function parentOf(ctx: Ctx): Parent | undefined {
  const sync = new Projects(ctx.core.store).settings(ctx.project).sync
  if (!isObj(sync) || sync.enabled !== true) return undefined
  const { url, token, project } = sync
  if (typeof url !== 'string' || !/^https?:\/\//.test(url) || typeof project !== 'string' || project === '')
    return undefined
  // Only scheme, host and port of the URL count (§9 parseUrl).
  return { origin: new URL(url).origin, token: typeof token === 'string' ? token : '', project }
}

// Each hop to a parent carries a count, so a cycle of projects (A inherits from B, B from A)
// ends with an error instead of requests chasing each other until they time out.
const HOPS = 'x-emulator-sync-hops'
const MAX_HOPS = 4

function hopHeaders(ctx: Ctx, parent: Parent): Record<string, string> {
  const hops = Number(ctx.req.headers[HOPS]) || 0
  if (
    hops >= MAX_HOPS ||
    (parent.origin === new URL(ctx.core.url()).origin && parent.project === ctx.project)
  )
    throw new HttpError(508, `Cyclic sync: project "${ctx.project}" inherits from itself through its parents`)
  return { [HOPS]: String(hops + 1) }
}

function remoteUrl(ctx: Ctx, parent: Parent, resource: Resource, id?: string, query = ''): string {
  const path = `/api/${encodeURIComponent(parent.project)}/${encodeURIComponent(ctx.environment)}/${resource}`
  const item = id === undefined ? '' : `/${encodeURIComponent(id)}`
  return `${parent.origin}${path}${item}?${query}token=${encodeURIComponent(parent.token)}`
}

/** Upstream turns its own sync off after any failed remote read (§9 "How it fails"). */
function failedRead(ctx: Ctx, what: string, reason: string): HttpError {
  if (ctx.d.sync.disableOnRemoteFailure) {
    const projects = new Projects(ctx.core.store)
    const sync = projects.settings(ctx.project).sync
    projects.setSettings(ctx.project, 'project', 'sync', { ...(isObj(sync) ? sync : {}), enabled: false })
    ctx.core.log.warn(`sync: reading ${what} from the parent failed (${reason}); sync disabled`)
    return new HttpError(
      404,
      `Unable to get resource "${what}" (${reason}). Disabling sync to avoid infinite loops`,
    )
  }
  return new HttpError(502, `The parent project could not be read (${what}): ${reason}`)
}

/** GET on the parent. `undefined` only when spec's parent says the item does not exist. */
async function remoteGet(
  ctx: Ctx,
  parent: Parent,
  resource: Resource,
  id?: string,
  query = '',
): Promise<unknown> {
  const what = id === undefined ? resource : `${resource}/${id}`
  const headers = hopHeaders(ctx, parent)
  let response: Response
  try {
    response = await fetch(remoteUrl(ctx, parent, resource, id, query), {
      headers,
      signal: AbortSignal.timeout(10_000),
    })
  } catch (error) {
    throw failedRead(ctx, what, (error as Error).message)
  }
  const text = await response.text()
  if (response.status === 404 && id !== undefined && !ctx.d.sync.disableOnRemoteFailure) return undefined
  if (!response.ok) throw failedRead(ctx, what, `${response.status} ${text.slice(0, 200)}`)
  try {
    return JSON.parse(text)
  } catch {
    throw failedRead(ctx, what, 'the answer is not JSON')
  }
}

/** POST with create=true on the parent; a failed write is an error, never a reason to disable sync. */
export async function remoteSet(
  ctx: Ctx,
  parent: Parent,
  resource: Resource,
  id: string,
  body: unknown,
): Promise<void> {
  const headers = { 'content-type': 'application/json', ...hopHeaders(ctx, parent) }
  let response: Response
  try {
    response = await fetch(remoteUrl(ctx, parent, resource, id, 'create=true&'), {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    })
  } catch (error) {
    throw new HttpError(
      502,
      `The parent project could not be written (${resource}/${id}): ${(error as Error).message}`,
    )
  }
  if (!response.ok) {
    const text = await response.text()
    throw new HttpError(
      502,
      `The parent project refused ${resource}/${id}: ${response.status} ${text.slice(0, 200)}`,
    )
  }
}

const INHERITED = { isLocked: true, sync: { isRemote: true, hasRemote: false } }

/** The parent's items of a kind; custom schemas only. */
async function parentList(ctx: Ctx, parent: Parent, kind: SyncedKind): Promise<Obj[]> {
  const query = kind === 'schemas' ? ctx.d.sync.schemaListQuery : ''
  const answer = await remoteGet(ctx, parent, kind, undefined, query)
  if (!Array.isArray(answer)) throw failedRead(ctx, kind, 'the answer is not a list')
  return answer.filter(isObj).filter((item) => kind !== 'schemas' || !isNativeSchema(String(item.id)))
}

/** A list merged with the parent's (mergeResource): remote-only items first, flagged and locked. */
export async function mergedList(ctx: Ctx, kind: SyncedKind, local: Obj[]): Promise<Obj[]> {
  const parent = parentOf(ctx)
  if (!parent) return local
  const remote = await parentList(ctx, parent, kind)
  const localIds = new Set(local.map((item) => item.id))
  const remoteIds = new Set(remote.map((item) => item.id))
  return [
    ...remote.filter((item) => !localIds.has(item.id)).map((item) => ({ ...item, ...INHERITED })),
    ...local.map((item) =>
      remoteIds.has(item.id)
        ? { ...item, isLocked: false, sync: { isRemote: false, hasRemote: true } }
        : item,
    ),
  ]
}

/** The parent's copy of an item the project does not hold, flagged as inherited; undefined when none. */
export async function inheritedItem(ctx: Ctx, kind: SyncedKind, id: string): Promise<Obj | undefined> {
  const parent = parentOf(ctx)
  if (!parent) return undefined
  const answer = await remoteGet(ctx, parent, kind, id)
  if (!isObj(answer) || (kind === 'forms' && answer.id === '')) return undefined
  return { ...answer, ...INHERITED }
}

/** The parent's media tree replaces the local one when it has anything in it (§9). */
export async function parentTree(ctx: Ctx): Promise<unknown> {
  const parent = parentOf(ctx)
  if (!parent) return undefined
  const tree = await remoteGet(ctx, parent, 'media/tree')
  const size = Array.isArray(tree)
    ? tree.filter((i) => isObj(i) && i.id !== '*').length
    : isObj(tree)
      ? Object.keys(tree).length
      : 0
  return size > 0 ? tree : undefined
}
