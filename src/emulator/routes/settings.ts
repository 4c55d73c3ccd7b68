// The Settings group (§6.9), config sections (§6.8), the schedule of a content node (§6.7)
// and sync login (§6.10).

import { type Core, type Ctx, objectBody, type Route } from '../context.js'
import { isObj } from '../entities.js'
import { HttpError, json } from '../http.js'
import { Projects } from '../projects.js'
import { names } from '../store.js'
import { scheduleOf } from './content.js'

function mayEditEnvironment(ctx: Ctx): void {
  const user = ctx.user
  if (!user || user.isAdmin || user.scopes[ctx.project]?.includes('settings')) return
  throw ctx.d.auth.rejectAnonymous
    ? new HttpError(403, 'You need the "settings" scope to do that')
    : new HttpError(400, 'You need the "settings" scope to do that')
}

export function settingsRoutes(route: Route, core: Core): void {
  const projects = new Projects(core.store)

  route('GET', '/api/:project/environments', { auth: 'user' }, (ctx) =>
    json(projects.environments(ctx.project)),
  )

  const read = (ctx: Ctx, scope: string) => {
    const doc = projects.settings(ctx.project, scope)
    const section = ctx.params.section
    return json(section === undefined ? doc : (doc[section] ?? {}))
  }
  const write = async (ctx: Ctx, scope: string) => {
    const value = await ctx.body({ allowArray: true })
    projects.setSettings(ctx.project, scope, ctx.params.section, value)
    return json(value)
  }
  route('GET', '/api/:project/settings', { auth: 'user' }, (ctx) => read(ctx, 'project'))
  route('GET', '/api/:project/settings/:section', { auth: 'user' }, (ctx) => read(ctx, 'project'))
  route('POST', '/api/:project/settings', { auth: 'admin', cookieOnly: true }, (ctx) => write(ctx, 'project'))
  route('POST', '/api/:project/settings/:section', { auth: 'admin' }, (ctx) => write(ctx, 'project'))
  for (const suffix of ['', '/:section']) {
    route('GET', `/api/:project/:environment/settings${suffix}`, { auth: 'user' }, (ctx) =>
      read(ctx, ctx.environment),
    )
    route('POST', `/api/:project/:environment/settings${suffix}`, { auth: 'user' }, (ctx) => {
      mayEditEnvironment(ctx)
      return write(ctx, ctx.environment)
    })
  }

  route('GET', '/api/:project/:environment/schedule/:contentId', { auth: 'user' }, (ctx) =>
    json(ctx.d.scheduleAlwaysEmpty ? [] : scheduleOf(ctx, ctx.params.contentId!)),
  )

  if (core.d.configUnreachable) {
    // Upstream resolves "config" as a project name on these routes, so they never work (§6.8).
    const unreachable = () => new HttpError(400, 'Project "config" could not be found')
    route('GET', '/api/config/:section', { auth: 'none' }, () => {
      throw unreachable()
    })
    route('POST', '/api/config/:section', { auth: 'none' }, () => {
      throw unreachable()
    })
  } else {
    route('GET', '/api/config/:section', { auth: 'admin' }, (ctx) =>
      json(ctx.core.store.get(names.config, ctx.params.section!) ?? {}),
    )
    route('POST', '/api/config/:section', { auth: 'admin' }, async (ctx) => {
      const value = await ctx.body()
      ctx.core.store.put(names.config, ctx.params.section!, value)
      return json(value)
    })
  }

  route('POST', '/api/:project/sync/login', { auth: 'admin' }, async (ctx) => {
    const body = await objectBody(ctx)
    const sync = projects.settings(ctx.project).sync
    const settings = isObj(sync) ? sync : {}
    const url = typeof body.url === 'string' && body.url !== '' ? body.url : String(settings.url ?? '')
    const fail = (message: string) => new HttpError(401, message)
    if (settings.project === ctx.project) throw fail('Cyclic sync')
    if (!/^https?:\/\//.test(url)) throw fail('Sync url not valid')
    let response: Response
    try {
      response = await fetch(`${new URL(url).origin}/api/user/login?persist=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: body.username, password: body.password }),
        signal: AbortSignal.timeout(10_000),
      })
    } catch (error) {
      throw fail(`Could not reach ${new URL(url).origin}: ${(error as Error).message}`)
    }
    const answer = await response.text()
    if (!response.ok) throw fail(answer || `Remote login failed with ${response.status}`)
    return ctx.text(answer)
  })
}
