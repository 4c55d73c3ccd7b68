// What content, schemas, connections and forms share: where an environment's records live,
// how a write finds its id (§7.2), and the pull/push pair of the server's Sync feature.

import type { Ctx, Route } from '../context.js'
import { newId, type Obj } from '../entities.js'
import { HttpError, json } from '../http.js'
import { inheritedItem, mergedList, parentOf, remoteSet, type SyncedKind } from '../parent-sync.js'
import { type EnvKind, names } from '../store.js'

export function col(ctx: Ctx, kind: EnvKind): string {
  return names.env(ctx.project, ctx.environment, kind)
}

export function envItems<T = Obj>(ctx: Ctx, kind: EnvKind): T[] {
  return ctx.core.store.list<T>(col(ctx, kind))
}

export function envItem<T = Obj>(ctx: Ctx, kind: EnvKind, id: string): T | undefined {
  return ctx.core.store.get<T>(col(ctx, kind), id)
}

export type WriteTarget = { urlId: string; id: string; existing: Obj | undefined; noop: boolean }

/**
 * Which record a `POST P/<kind>/:id` writes. Spec: the URL id, a different body id is refused,
 * an unknown id needs ?create=true. Upstream: the body id wins (missing -> ""), and an unknown
 * id without ?create=true is a silent no-op that still answers 200.
 */
export function writeTarget(ctx: Ctx, kind: EnvKind, label: string, body: Obj): WriteTarget {
  const urlId = ctx.params.id!
  let id: string
  if (ctx.d.writes.bodyIdWins) id = typeof body.id === 'string' ? body.id : ''
  else {
    if (body.id !== undefined && body.id !== urlId) {
      throw ctx.d.errors.bad(
        `The body id ${JSON.stringify(body.id)} differs from the id in the URL "${urlId}"`,
      )
    }
    id = urlId
  }
  const existing = envItem(ctx, kind, urlId)
  const create = ctx.query('create') === 'true' || ctx.query('create') === '1'
  if (!existing && !create) {
    if (ctx.d.writes.silentNoopWithoutCreate) return { urlId, id, existing, noop: true }
    throw ctx.d.errors.notFound(`${label} by id "${urlId}" was not found; add ?create=true to create it`)
  }
  return { urlId, id, existing, noop: false }
}

/** Stores under the target id; when the body renamed the record, the old key goes. */
export function storeWrite(ctx: Ctx, kind: EnvKind, target: WriteTarget, value: Obj): void {
  if (target.noop) return
  const collection = col(ctx, kind)
  if (target.id !== target.urlId) ctx.core.store.del(collection, target.urlId)
  ctx.core.store.put(collection, target.id, value)
}

export function missing(ctx: Ctx, label: string, id: string): HttpError {
  return ctx.d.errors.notFound(`${label} by id "${id}" was not found`)
}

/** The record the URL's :id names, or the dialect's not-found error. */
export function requireItem(ctx: Ctx, kind: EnvKind, label: string, id = ctx.params.id!): Obj {
  const item = envItem(ctx, kind, id)
  if (!item) throw missing(ctx, label, id)
  return item
}

/**
 * Per-kind hooks of pull/push: what pull stores (content keeps its dates as schedule tasks) and
 * what push sends (content with those dates). Default: the item as is.
 */
export type SyncHooks = { persist?: (ctx: Ctx, item: Obj) => Obj; outgoing?: (ctx: Ctx, item: Obj) => Obj }

/**
 * `P/<path>/pull/:id` and `push/:id` (§9): pull copies the parent's item in as a local one,
 * push writes the local item to the parent with create=true. Without a parent, spec refuses
 * both; upstream's pull finds nothing and its push answers 200 having done nothing.
 */
export function syncRoutes(route: Route, path: SyncedKind, label: string, hooks: SyncHooks = {}): void {
  const persist = hooks.persist ?? ((_c: Ctx, item: Obj) => item)
  const outgoing = hooks.outgoing ?? ((_c: Ctx, item: Obj) => item)
  const notEnabled = (ctx: Ctx) =>
    new HttpError(
      404,
      `Sync is not enabled for project "${ctx.project}": it has no parent project to ${path} with`,
    )
  const reply = (ctx: Ctx, how: 'item' | 'id' | 'OK', item: Obj) =>
    how === 'item' ? json(item) : ctx.text(how === 'id' ? ctx.params.id! : 'OK')
  route('POST', `/api/:project/:environment/${path}/pull/:id`, { auth: 'user' }, async (ctx) => {
    const id = ctx.params.id!
    if (!parentOf(ctx) && !ctx.d.sync.pushWithoutParentOk) throw notEnabled(ctx)
    const remote = await inheritedItem(ctx, path, id)
    if (!remote) throw new HttpError(404, `Couldn't find remote ${label} "${id}"`)
    const local = { ...remote, id, isLocked: false, sync: { isRemote: false, hasRemote: false } }
    ctx.core.store.put(col(ctx, path), id, persist(ctx, local))
    const how = ctx.d.sync.pullReply[path]
    // Upstream answers with the remote item, still flagged as remote (§6.2).
    return how === 'remote-item' ? json(remote) : reply(ctx, how, local)
  })
  route('POST', `/api/:project/:environment/${path}/push/:id`, { auth: 'user' }, async (ctx) => {
    const parent = parentOf(ctx)
    if (!parent && !ctx.d.sync.pushWithoutParentOk) throw notEnabled(ctx)
    const item = requireItem(ctx, path, label)
    if (parent) {
      const { isLocked: _l, sync: _s, ...body } = item
      await remoteSet(ctx, parent, path, ctx.params.id!, outgoing(ctx, body))
    }
    return reply(ctx, ctx.d.sync.pushReply[path], item)
  })
}

/**
 * A create on an id the project does not hold but inherits: upstream stores it as a new local
 * item (§9); spec refuses, so the locked copy is never replaced without a pull first.
 */
export async function guardInherited(
  ctx: Ctx,
  kind: SyncedKind,
  label: string,
  target: WriteTarget,
): Promise<void> {
  if (target.existing || target.noop || ctx.d.sync.writeInherited !== 'refuse' || !parentOf(ctx)) return
  if (!(await inheritedItem(ctx, kind, target.urlId))) return
  throw new HttpError(
    409,
    `${label} "${target.urlId}" is inherited from the parent project and locked here; ` +
      `POST ${kind}/pull/${target.urlId} makes a local copy to edit`,
  )
}

/**
 * The routes connections and forms share: the list, `new` (a default record under a fresh
 * id, returned with the `sync: {}` upstream gives unsaved items), pull/push and heartbeat.
 */
export function basicRoutes(
  route: Route,
  path: 'connections' | 'forms',
  label: string,
  make: (ctx: Ctx, id: string) => Obj,
): void {
  const P = '/api/:project/:environment'
  route('GET', `${P}/${path}`, { auth: 'user', listing: [path] }, async (ctx) =>
    json(await mergedList(ctx, path, envItems(ctx, path))),
  )
  route('POST', `${P}/${path}/new`, { auth: 'user' }, (ctx) => {
    const item = make(ctx, newId())
    ctx.core.store.put(col(ctx, path), item.id as string, item)
    return json({ ...item, sync: {} })
  })
  syncRoutes(route, path, label)
  route('POST', `${P}/${path}/heartbeat/:id`, { auth: 'user' }, (ctx) => heartbeat(ctx, path))
}

/** Records who looked at a resource last (§6.14); these fields change without an edit. */
export function heartbeat(
  ctx: Ctx,
  kind: 'content' | 'schemas' | 'connections' | 'forms' = 'content',
): ReturnType<Ctx['text']> {
  const userId = ctx.userId()
  const item = envItem(ctx, kind, ctx.params.id!)
  if (item) {
    ctx.core.store.put(col(ctx, kind), ctx.params.id!, {
      ...item,
      viewedBy: userId,
      viewedOn: new Date(ctx.core.now()).toISOString(),
    })
  }
  return ctx.text('OK')
}
