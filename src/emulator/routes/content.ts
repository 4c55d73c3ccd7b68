// Content routes (§6.2): list, read, new, full-replace write, insert, example, delete with or
// without children, heartbeat and the pull/push pair.

import { type Core, objectBody, type Route } from '../context.js'
import { isObj, newId } from '../entities.js'
import { json } from '../http.js'
import { inheritedItem, mergedList } from '../parent-sync.js'
import {
  buildContent,
  checkParent,
  descendantsOf,
  dropSchedule,
  inheritedParent,
  isRoot,
  persistContent,
  withSchedule,
} from './content-model.js'
import { publishingRoutes } from './publishing.js'
import {
  col,
  envItem,
  envItems,
  guardInherited,
  heartbeat,
  missing,
  storeWrite,
  syncRoutes,
  writeTarget,
} from './resource.js'
import { buildSchema, findSchema } from './schemas.js'

const P = '/api/:project/:environment'

export function contentRoutes(route: Route, _core: Core): void {
  route('GET', `${P}/content`, { auth: 'user', listing: ['content'] }, async (ctx) => {
    const sorted = envItems(ctx, 'content').sort((a, b) => (Number(a.sort) || 0) - (Number(b.sort) || 0))
    const own = ctx.d.content.listShowsSchedule ? sorted.map((c) => withSchedule(ctx, c)) : sorted
    return json(await mergedList(ctx, 'content', own))
  })

  route('POST', `${P}/content/new`, { auth: 'user' }, async (ctx) => {
    const userId = ctx.userId()
    const schemaId = ctx.query('schemaId')
    const parentId = ctx.query('parentId') ?? ''
    if (!schemaId) throw ctx.d.errors.bad('Parameter "schemaId" is required')
    if (!findSchema(ctx, schemaId)) throw ctx.d.errors.notFound(`Schema "${schemaId}" could not be found`)
    const body = await objectBody(ctx, true)
    const parent = await inheritedParent(ctx, parentId)
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
      parent,
    )
    ctx.core.store.put(col(ctx, 'content'), content.id as string, persistContent(ctx, content, userId))
    return json({ ...content, sync: {} })
  })

  route('POST', `${P}/content/insert`, { auth: 'user' }, async (ctx) => {
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
    checkParent(ctx, contentId, parentId, moved.schemaId, await inheritedParent(ctx, parentId))
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
      if (ctx.d.content.insertDropsSchedule) dropSchedule(ctx, node.id as string)
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

  // Before `content/:id`: `publish` and `unpublish` are route words, never ids.
  publishingRoutes(route)

  syncRoutes(route, 'content', 'Content', {
    persist: (ctx, item) => persistContent(ctx, item, ctx.userId()),
    outgoing: withSchedule,
  })

  route('POST', `${P}/content/heartbeat/:id`, { auth: 'user' }, (ctx) => heartbeat(ctx))

  route('GET', `${P}/content/:id`, { auth: 'user' }, async (ctx) => {
    const own = envItem(ctx, 'content', ctx.params.id!)
    if (own) return json(withSchedule(ctx, own))
    const inherited = await inheritedItem(ctx, 'content', ctx.params.id!)
    if (!inherited) throw missing(ctx, 'Content', ctx.params.id!)
    return json(inherited)
  })

  route('POST', `${P}/content/:id`, { auth: 'user' }, async (ctx) => {
    const body = await objectBody(ctx)
    const userId = ctx.userId()
    const target = writeTarget(ctx, 'content', 'Content', body)
    await guardInherited(ctx, 'content', 'Content', target)
    const parent = await inheritedParent(ctx, body.parentId)
    const content = buildContent(ctx, body, target.id, target.existing, userId, parent)
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
      if (ctx.d.content.deleteRemovesSchedule) dropSchedule(ctx, goneId)
    }
    if (!removeChildren) {
      const now = new Date(ctx.core.now()).toISOString()
      for (const child of descendantsOf(all, id, false)) {
        store.put(col(ctx, 'content'), child.id as string, {
          ...child,
          parentId: ctx.d.content.orphanParentId,
          ...(ctx.d.content.orphanKeepsUpdateDate ? {} : { updateDate: now }),
        })
      }
    }
    return ctx.text(ctx.d.replies.contentDelete === 'id' ? id : message)
  })
}
