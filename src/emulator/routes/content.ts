// Content (§6.2, §7.1): full-replace writes with the server-owned fields forced, the parent's
// allowedChildSchemas check on every write, publishOn/unpublishOn kept as schedule tasks,
// ordering by `sort`, insert, example, and delete with or without children.

import { type Core, type Ctx, objectBody, type Route } from '../context.js'
import { build, isObj, newId, type Obj, SHAPES } from '../entities.js'
import { json } from '../http.js'
import { names } from '../store.js'
import { col, envItem, envItems, missing, storeWrite, syncRoutes, writeTarget } from './resource.js'
import { buildSchema, findSchema } from './schemas.js'

const P = '/api/:project/:environment'
const EPOCH = new Date(0).toISOString()
const SCHEDULE_TYPES = [
  ['publish', 'publishOn'],
  ['unpublish', 'unpublishOn'],
] as const

const isRoot = (parentId: unknown) => parentId === '' || parentId === null || parentId === undefined

export function scheduleOf(ctx: Ctx, contentId: string): Obj[] {
  return SCHEDULE_TYPES.flatMap(([type]) => {
    const task = ctx.core.store.get<Obj>(
      names.tasks,
      names.taskKey(ctx.project, ctx.environment, contentId, type),
    )
    return task ? [{ type: task.type, date: task.date, content: task.content }] : []
  })
}

function withSchedule(ctx: Ctx, content: Obj): Obj {
  const tasks = scheduleOf(ctx, content.id as string)
  const dateOf = (type: string) => tasks.find((t) => t.type === type)?.date ?? null
  return { ...content, publishOn: dateOf('publish'), unpublishOn: dateOf('unpublish') }
}

/** The parent checks every content write runs (§11 "Order of creation"). */
function checkParent(ctx: Ctx, id: string, parentId: unknown, schemaId: unknown): void {
  if (isRoot(parentId)) return
  if (parentId === id) throw ctx.d.errors.bad(`Content "${id}" cannot be a child of itself`)
  const parent = envItem(ctx, 'content', parentId as string)
  if (!parent) throw missing(ctx, 'Content', parentId as string)
  const parentSchema = findSchema(ctx, parent.schemaId as string)
  const allowed = parentSchema?.allowedChildSchemas
  if (Array.isArray(allowed) && !allowed.includes(schemaId)) {
    throw ctx.d.errors.bad('This type of content is not allowed here')
  }
}

function bottomSort(ctx: Ctx, parentId: unknown, exceptId: string): number {
  const sorts = envItems(ctx, 'content')
    .filter(
      (c) =>
        c.id !== exceptId &&
        isRoot(c.parentId) === isRoot(parentId) &&
        (isRoot(parentId) || c.parentId === parentId),
    )
    .map((c) => Number(c.sort) || 0)
  return Math.max(0, ...sorts) + 1
}

function saveSchedule(ctx: Ctx, content: Obj, userId: string): void {
  for (const [type, field] of SCHEDULE_TYPES) {
    const key = names.taskKey(ctx.project, ctx.environment, content.id as string, type)
    const date = content[field]
    if (date === null) ctx.core.store.del(names.tasks, key)
    else {
      ctx.core.store.put(names.tasks, key, {
        type,
        date,
        content: content.id,
        user: userId,
        project: ctx.project,
        environment: ctx.environment,
      })
    }
  }
}

/** A content node from a body, with what the server owns set as upstream sets it (§7.1). */
export function buildContent(
  ctx: Ctx,
  body: Obj,
  id: string,
  existing: Obj | undefined,
  userId: string,
): Obj {
  const content = build(SHAPES.content, body, ctx.d, 'Content')
  content.id = id
  if (content.createDate === null) {
    content.createDate = ctx.d.content.missingCreateDateIsEpoch
      ? EPOCH
      : ((existing?.createDate as string | undefined) ?? new Date(ctx.core.now()).toISOString())
  }
  for (const [, field] of SCHEDULE_TYPES) {
    const date = content[field]
    if (typeof date === 'string' && new Date(date).getUTCFullYear() === 1970) {
      throw ctx.d.errors.bad(`Date "${String(body[field])}" is invalid`)
    }
  }
  checkParent(ctx, id, content.parentId, content.schemaId)
  if (Number(content.sort) <= 0) content.sort = bottomSort(ctx, content.parentId, id)
  return {
    ...content,
    updateDate: new Date(ctx.core.now()).toISOString(),
    updatedBy: userId,
    createdBy: content.createdBy || userId,
    isLocked: false,
    sync: { isRemote: false, hasRemote: false },
  }
}

export function persistContent(ctx: Ctx, content: Obj, userId: string): Obj {
  saveSchedule(ctx, content, userId)
  // Reads take the dates from the tasks, so the stored document need not carry them.
  return { ...content, publishOn: null, unpublishOn: null }
}

function descendantsOf(all: Obj[], id: string, deep: boolean): Obj[] {
  const children = all.filter((c) => c.parentId === id)
  return deep ? children.flatMap((c) => [c, ...descendantsOf(all, c.id as string, true)]) : children
}

export function contentRoutes(route: Route, _core: Core): void {
  route('GET', `${P}/content`, { auth: 'user' }, (ctx) => {
    const sorted = envItems(ctx, 'content').sort((a, b) => (Number(a.sort) || 0) - (Number(b.sort) || 0))
    return json(ctx.d.content.listShowsSchedule ? sorted.map((c) => withSchedule(ctx, c)) : sorted)
  })

  route('POST', `${P}/content/new`, { auth: 'user' }, async (ctx) => {
    const userId = ctx.userId()
    const schemaId = ctx.query('schemaId')
    const parentId = ctx.query('parentId') ?? ''
    if (!schemaId) throw ctx.d.errors.bad('Parameter "schemaId" is required')
    if (!findSchema(ctx, schemaId)) throw ctx.d.errors.notFound(`Schema "${schemaId}" could not be found`)
    const body = await objectBody(ctx, true)
    const properties = 'properties' in body ? body.properties : body
    const now = new Date(ctx.core.now()).toISOString()
    const content = buildContent(
      ctx,
      {
        parentId,
        schemaId,
        properties: isObj(properties) ? properties : {},
        createDate: now,
        createdBy: userId,
      },
      newId(),
      undefined,
      userId,
    )
    ctx.core.store.put(col(ctx, 'content'), content.id as string, persistContent(ctx, content, userId))
    return json({ ...content, sync: {} })
  })

  route('POST', `${P}/content/insert`, { auth: 'user' }, (ctx) => {
    const userId = ctx.userId()
    const contentId = ctx.query('contentId') ?? ''
    const parentId = ctx.query('parentId')
    if (parentId === undefined) throw ctx.d.errors.bad('Parameter "parentId" is required')
    const all = envItems(ctx, 'content')
    const moved = all.find((c) => c.id === contentId)
    if (!moved) throw missing(ctx, 'Content', contentId)
    if (parentId === contentId) throw ctx.d.errors.bad('Content cannot be a parent of itself')
    if (descendantsOf(all, contentId, true).some((c) => c.id === parentId)) {
      throw ctx.d.errors.bad('Content cannot be a child of its own descendants')
    }
    checkParent(ctx, contentId, parentId, moved.schemaId)
    const siblings = all
      .filter((c) => c.id !== contentId)
      .filter((c) =>
        isRoot(parentId)
          ? isRoot(c.parentId)
          : ctx.d.content.insertRenumbersAllNonRoot
            ? !isRoot(c.parentId)
            : c.parentId === parentId,
      )
      .sort((a, b) => (Number(a.sort) || 0) - (Number(b.sort) || 0))
    const position = Math.max(0, Math.floor(Number(ctx.query('position'))) || 0)
    siblings.splice(Math.min(position, siblings.length), 0, { ...moved, parentId })
    const now = new Date(ctx.core.now()).toISOString()
    siblings.forEach((node, index) => {
      const updated = { ...node, sort: index + 1, updateDate: now, updatedBy: userId }
      ctx.core.store.put(col(ctx, 'content'), node.id as string, updated)
    })
    return ctx.text('OK')
  })

  route('POST', `${P}/content/example`, { auth: 'user' }, (ctx) => {
    const userId = ctx.userId()
    const schema = buildSchema(ctx, {
      id: newId(),
      name: 'Example Page',
      type: 'content',
      parentSchemaId: 'page',
    })
    ctx.core.store.put(col(ctx, 'schemas'), schema.id as string, schema)
    const content = buildContent(
      ctx,
      {
        schemaId: schema.id,
        properties: { title: 'Example page' },
        createDate: new Date(ctx.core.now()).toISOString(),
      },
      newId(),
      undefined,
      userId,
    )
    ctx.core.store.put(col(ctx, 'content'), content.id as string, persistContent(ctx, content, userId))
    return ctx.text('OK')
  })

  syncRoutes(route, 'content', 'content', 'Content')

  route('POST', `${P}/content/heartbeat/:id`, { auth: 'user' }, (ctx) => heartbeat(ctx))

  route('GET', `${P}/content/:id`, { auth: 'user' }, (ctx) => {
    const content = envItem(ctx, 'content', ctx.params.id!)
    if (!content) throw missing(ctx, 'Content', ctx.params.id!)
    return json(withSchedule(ctx, content))
  })

  route('POST', `${P}/content/:id`, { auth: 'user' }, async (ctx) => {
    const body = await objectBody(ctx)
    const userId = ctx.userId()
    const target = writeTarget(ctx, 'content', 'Content', body)
    const content = buildContent(ctx, body, target.id, target.existing, userId)
    if (target.noop) return json(content)
    storeWrite(ctx, 'content', target, persistContent(ctx, content, userId))
    return json(content)
  })

  route('DELETE', `${P}/content/:id`, { auth: 'user' }, (ctx) => {
    const id = ctx.params.id!
    const message = `Content with id "${id}" deleted successfully`
    const all = envItems(ctx, 'content')
    if (!all.some((c) => c.id === id)) {
      if (ctx.d.writes.deleteUnknownOk) return ctx.text(message)
      throw missing(ctx, 'Content', id)
    }
    const store = ctx.core.store
    const removeChildren = ctx.query('removeChildren') === 'true'
    const gone = [
      id,
      ...(removeChildren ? descendantsOf(all, id, ctx.d.content.deleteWholeSubtree) : []).map(
        (c) => c.id as string,
      ),
    ]
    for (const goneId of gone) {
      store.del(col(ctx, 'content'), goneId)
      // Upstream leaves the tasks of deleted nodes behind (§11); spec cleans up after itself.
      if (ctx.d.content.deleteWholeSubtree) {
        for (const [type] of SCHEDULE_TYPES)
          store.del(names.tasks, names.taskKey(ctx.project, ctx.environment, goneId, type))
      }
    }
    if (!removeChildren) {
      const now = new Date(ctx.core.now()).toISOString()
      for (const child of descendantsOf(all, id, false)) {
        store.put(col(ctx, 'content'), child.id as string, {
          ...child,
          parentId: ctx.d.content.orphanParentId,
          updateDate: now,
        })
      }
    }
    return ctx.text(ctx.d.content.deleteWholeSubtree ? id : message)
  })
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
