// Connections (§6.4, §5.4): the processor and deployer classes are chosen by `alias`, and the
// server rewrites their title, alias and name itself.

import { type Core, type Ctx, objectBody, type Route } from '../context.js'
import { build, isObj, type Obj, SHAPES } from '../entities.js'
import { json } from '../http.js'
import { inheritedItem } from '../parent-sync.js'
import { basicRoutes, col, envItem, guardInherited, missing, storeWrite, writeTarget } from './resource.js'

const P = '/api/:project/:environment'

const DEPLOYERS: Record<string, string> = { api: 'API', filesystem: 'File system', git: 'Git' }
const PROCESSORS: Record<string, { title: string; name: string }> = {
  json: { title: 'JSON', name: 'JsonProcessor' },
  uischema: { title: 'uischema.org', name: 'UISchemaProcessor' },
}

function processorOf(value: unknown): Obj {
  const body = isObj(value) ? value : {}
  const alias = typeof body.alias === 'string' && body.alias in PROCESSORS ? body.alias : undefined
  if (!alias) return { name: 'Processor', alias: 'processor', fileExtension: '' }
  return { name: PROCESSORS[alias]!.name, alias, fileExtension: '.json' }
}

function deployerOf(value: unknown): Obj {
  const body = isObj(value) ? value : {}
  const alias = typeof body.alias === 'string' && body.alias in DEPLOYERS ? body.alias : undefined
  const paths = isObj(body.paths) ? body.paths : {}
  const specific = { ...body }
  delete specific.title
  delete specific.alias
  delete specific.name
  delete specific.paths
  // In the order the server gives: what it derives first, then the deployer's own settings.
  return {
    title: alias ? DEPLOYERS[alias] : 'Deployer',
    alias: alias ?? 'deployer',
    paths: {
      media: typeof paths.media === 'string' ? paths.media : '',
      content: typeof paths.content === 'string' ? paths.content : '',
    },
    ...specific,
  }
}

export function buildConnection(ctx: Ctx, body: Obj, id: string): Obj {
  const connection = build(SHAPES.connection, body, ctx.d, 'Connection')
  return {
    ...connection,
    id,
    processor: processorOf(connection.processor),
    deployer: deployerOf(connection.deployer),
    isLocked: false,
    sync: { isRemote: false, hasRemote: false },
  }
}

export function connectionRoutes(route: Route, _core: Core): void {
  route('GET', `${P}/connections/deployers`, { auth: 'user' }, () => json(DEPLOYERS))
  route('GET', `${P}/connections/processors`, { auth: 'user' }, () =>
    json(Object.fromEntries(Object.entries(PROCESSORS).map(([alias, p]) => [alias, p.title]))),
  )
  basicRoutes(route, 'connections', 'Connection', (ctx, id) =>
    buildConnection(ctx, { title: 'New connection' }, id),
  )

  route('GET', `${P}/connections/:id`, { auth: 'user' }, async (ctx) => {
    const id = ctx.params.id!
    const connection = envItem(ctx, 'connections', id) ?? (await inheritedItem(ctx, 'connections', id))
    if (!connection) throw missing(ctx, 'Connection', id)
    return json(connection)
  })

  route('POST', `${P}/connections/:id`, { auth: 'user' }, async (ctx) => {
    const body = await objectBody(ctx)
    const target = writeTarget(ctx, 'connections', 'Connection', body)
    await guardInherited(ctx, 'connections', 'Connection', target)
    const connection = buildConnection(ctx, body, target.id)
    storeWrite(ctx, 'connections', target, connection)
    return json(connection)
  })

  route('DELETE', `${P}/connections/:id`, { auth: 'user' }, (ctx) => {
    const id = ctx.params.id!
    const connection = envItem(ctx, 'connections', id)
    const message = `Connection with id "${id}" deleted successfully`
    if (!connection) {
      if (ctx.d.writes.deleteUnknownOk) return ctx.text(message)
      throw missing(ctx, 'Connection', id)
    }
    ctx.core.store.del(col(ctx, 'connections'), id)
    return ctx.d.replies.connectionDelete === 'message' ? ctx.text(message) : json(connection)
  })
}
