// Schemas (§6.3): native first then custom, full-replace writes with `type` required,
// re-parenting on delete, and the import of field schemas from a URL.

import { type Core, type Ctx, objectBody, type Route } from '../context.js'
import { build, isObj, newId, type Obj, SHAPES } from '../entities.js'
import { json } from '../http.js'
import { isNativeSchema, nativeSchema, nativeSchemas } from '../native-schemas.js'
import { inheritedItem, mergedList } from '../parent-sync.js'
import {
  col,
  envItem,
  envItems,
  guardInherited,
  heartbeat,
  storeWrite,
  syncRoutes,
  writeTarget,
} from './resource.js'

const P = '/api/:project/:environment'

function withEditorName(editorId: unknown): string {
  const id = typeof editorId === 'string' ? editorId : ''
  if (id === '' || id.includes('Editor')) return id
  return `${id.charAt(0).toUpperCase()}${id.slice(1)}Editor`
}

/** A schema from a body, with the server-owned fields forced (§7.1). */
export function buildSchema(ctx: Ctx, body: Obj): Obj {
  if (body.type !== 'content' && body.type !== 'field') {
    throw ctx.d.errors.bad(
      `Schema data is incorrectly formatted: "type" must be "content" or "field" in ${JSON.stringify(body).slice(0, 500)}`,
    )
  }
  const extra = body.type === 'content' ? SHAPES.contentSchema : SHAPES.fieldSchema
  const schema = build({ ...SHAPES.schemaBase, ...extra }, body, ctx.d, 'Schema')
  if (schema.type === 'field') schema.editorId = withEditorName(schema.editorId)
  if (schema.name === '') schema.name = schema.type === 'content' ? 'New content schema' : 'New field schema'
  return { ...schema, isLocked: false, sync: { isRemote: false, hasRemote: false } }
}

export function findSchema(ctx: Ctx, id: string): Obj | undefined {
  return nativeSchema(id) ?? envItem(ctx, 'schemas', id)
}

export function schemaRoutes(route: Route, core: Core): void {
  const list = async (ctx: Ctx) => {
    const customOnly = ctx.query('customOnly')
    if (customOnly !== undefined && ctx.d.schemas.customOnlyBroken)
      throw ctx.d.errors.notFound('SchemaService.getCustomSchema is not a function')
    // Native first, then the custom ones merged with the parent's when the project inherits.
    const custom = await mergedList(ctx, 'schemas', envItems(ctx, 'schemas'))
    return json(customOnly === 'true' || customOnly === '1' ? custom : [...nativeSchemas(), ...custom])
  }
  if (core.d.schemas.singularListRoute)
    route('GET', `${P}/schema`, { auth: 'user', listing: ['schemas'] }, list)
  route('GET', `${P}/schemas`, { auth: 'user', listing: ['schemas'] }, list)

  route('POST', `${P}/${core.d.schemas.importPath}`, { auth: 'user' }, async (ctx) => {
    const url = ctx.query('url')
    if (!url) throw ctx.d.errors.bad('URL was not provided')
    let fetched: unknown
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(10_000) })
      if (!response.ok) throw new Error(`${url} answered ${response.status}`)
      fetched = await response.json()
    } catch (error) {
      throw ctx.d.errors.bad(`Could not import from ${url}: ${(error as Error).message}`)
    }
    const items = Array.isArray(fetched) ? fetched : isObj(fetched) ? Object.values(fetched) : []
    for (const item of items) {
      if (!isObj(item)) continue
      // uischema.org entries are named by @type; plain schemas bring their own id and type.
      const typeName = typeof item['@type'] === 'string' ? item['@type'] : undefined
      const id =
        typeof item.id === 'string'
          ? item.id
          : typeName
            ? typeName.charAt(0).toLowerCase() + typeName.slice(1)
            : newId()
      const body = typeName
        ? {
            id,
            name: typeName,
            type: 'field',
            parentSchemaId: 'struct',
            editorId: 'StructEditor',
            config: { struct: item },
          }
        : { ...item, id }
      ctx.core.store.put(col(ctx, 'schemas'), id, buildSchema(ctx, body))
    }
    return json(fetched)
  })

  route('POST', `${P}/schemas/new`, { auth: 'user' }, (ctx) => {
    const parentId = ctx.query('parentSchemaId')
    if (!parentId) throw ctx.d.errors.bad('Parameter "parentSchemaId" is required')
    const parent = findSchema(ctx, parentId)
    if (!parent) throw ctx.d.errors.notFound(`Schema "${parentId}" could not be found`)
    const schema = buildSchema(ctx, {
      id: newId(),
      type: parent.type,
      icon: parent.icon || 'file',
      parentSchemaId: parentId,
    })
    ctx.core.store.put(col(ctx, 'schemas'), schema.id as string, schema)
    return json({ ...schema, sync: {} })
  })

  syncRoutes(route, 'schemas', 'Schema')
  route('POST', `${P}/schemas/heartbeat/:id`, { auth: 'user' }, (ctx) => heartbeat(ctx, 'schemas'))

  route('GET', `${P}/schemas/:id`, { auth: 'user' }, async (ctx) => {
    const schema = findSchema(ctx, ctx.params.id!) ?? (await inheritedItem(ctx, 'schemas', ctx.params.id!))
    if (!schema) throw ctx.d.errors.notFound(`Schema "${ctx.params.id}" could not be found`)
    return json(schema)
  })

  route('POST', `${P}/schemas/:id`, { auth: 'user' }, async (ctx) => {
    const body = await objectBody(ctx)
    if (isNativeSchema(ctx.params.id!) && ctx.d.schemas.refuseNativeWrite) {
      throw ctx.d.errors.bad(`Schema "${ctx.params.id}" is a native schema and cannot be changed`)
    }
    const target = writeTarget(ctx, 'schemas', 'Schema', body)
    await guardInherited(ctx, 'schemas', 'Schema', target)
    const schema = buildSchema(ctx, { ...body, id: target.id })
    if (target.id !== target.urlId && (envItem(ctx, 'schemas', target.id) || isNativeSchema(target.id))) {
      throw ctx.d.errors.taken(`The Schema id "${target.id}" already exists.`)
    }
    storeWrite(ctx, 'schemas', target, schema)
    return json(schema)
  })

  route('DELETE', `${P}/schemas/:id`, { auth: 'user' }, (ctx) => {
    const id = ctx.params.id!
    const native = isNativeSchema(id)
    if (native && ctx.d.schemas.refuseNativeWrite)
      throw ctx.d.errors.bad(`Schema "${id}" is a native schema and cannot be deleted`)
    const schema = findSchema(ctx, id)
    if (!schema) throw ctx.d.errors.notFound(`Schema "${id}" could not be found`)
    // Children move up to the deleted schema's parent; content using it is left alone (§6.3).
    for (const child of envItems(ctx, 'schemas')) {
      if (child.parentSchemaId === id)
        ctx.core.store.put(col(ctx, 'schemas'), child.id as string, {
          ...child,
          parentSchemaId: schema.parentSchemaId,
        })
    }
    if (!native) ctx.core.store.del(col(ctx, 'schemas'), id)
    return ctx.text(`Schema with id "${id}" deleted successfully`)
  })
}
