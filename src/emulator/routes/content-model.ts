// Content nodes as the server writes them (§7.1): the full-replace build with the server-owned
// fields forced, the parent checks, the "bottom" sort, and publishOn/unpublishOn kept as
// schedule tasks (§5.6).

import type { Ctx } from '../context.js'
import { build, type Obj, SHAPES } from '../entities.js'
import { inheritedItem } from '../parent-sync.js'
import { names } from '../store.js'
import { col, envItem, missing } from './resource.js'
import { findSchema } from './schemas.js'

const EPOCH = new Date(0).toISOString()
export const SCHEDULE_TYPES = [
  ['publish', 'publishOn'],
  ['unpublish', 'unpublishOn'],
] as const

export const isRoot = (parentId: unknown) => parentId === '' || parentId === null || parentId === undefined

export function scheduleOf(ctx: Ctx, contentId: string): Obj[] {
  return SCHEDULE_TYPES.flatMap(([type]) => {
    const task = ctx.core.store.get<Obj>(
      names.tasks,
      names.taskKey(ctx.project, ctx.environment, contentId, type),
    )
    return task ? [{ type: task.type, date: task.date, content: task.content }] : []
  })
}

export function dropSchedule(ctx: Ctx, contentId: string): void {
  for (const [type] of SCHEDULE_TYPES) {
    ctx.core.store.del(names.tasks, names.taskKey(ctx.project, ctx.environment, contentId, type))
  }
}

export function withSchedule(ctx: Ctx, content: Obj): Obj {
  const tasks = scheduleOf(ctx, content.id as string)
  const dateOf = (type: string) => tasks.find((t) => t.type === type)?.date ?? null
  return { ...content, publishOn: dateOf('publish'), unpublishOn: dateOf('unpublish') }
}

/**
 * The parent checks every content write runs (§11 "Order of creation"). The server looks the
 * parent up by id, which reaches the parent project for an id it does not hold (§9): a parent
 * the project inherits is found too (`inherited`, from inheritedParent).
 */
export function checkParent(
  ctx: Ctx,
  id: string,
  parentId: unknown,
  schemaId: unknown,
  inherited?: Obj,
): void {
  if (isRoot(parentId)) return
  if (parentId === id) throw ctx.d.errors.bad(`Content "${id}" cannot be a child of itself`)
  const parent = envItem(ctx, 'content', parentId as string) ?? inherited
  if (!parent) throw missing(ctx, 'Content', parentId as string)
  const parentSchema = findSchema(ctx, parent.schemaId as string)
  const allowed = parentSchema?.allowedChildSchemas
  if (Array.isArray(allowed) && !allowed.includes(schemaId)) {
    throw ctx.d.errors.bad('This type of content is not allowed here')
  }
}

/** The parent project's copy of a parent this project does not hold itself, for checkParent. */
export async function inheritedParent(ctx: Ctx, parentId: unknown): Promise<Obj | undefined> {
  if (isRoot(parentId) || typeof parentId !== 'string' || envItem(ctx, 'content', parentId)) return undefined
  return inheritedItem(ctx, 'content', parentId)
}

function bottomSort(ctx: Ctx, parentId: unknown, exceptId: string): number {
  const sorts = [...(ctx.core.store.peek(col(ctx, 'content')) as Iterable<Obj>)]
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
  /** The parent, when the project inherits it (inheritedParent). */
  parent?: Obj,
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
  checkParent(ctx, id, content.parentId, content.schemaId, parent)
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

export function descendantsOf(all: Obj[], id: string, deep: boolean): Obj[] {
  const children = all.filter((c) => c.parentId === id)
  return deep ? children.flatMap((c) => [c, ...descendantsOf(all, c.id as string, true)]) : children
}
