// The Server group (§6.11: projects, environments, project settings, migrate) and the Test
// group's self-test (§6.12). Backups are left out (docs/emulator.md says why).

import { publicUser } from '../auth.js'
import { type Core, type Ctx, objectBody, type Route } from '../context.js'
import { isObj, newId } from '../entities.js'
import { HttpError, json } from '../http.js'
import { badEnvironmentName, Projects } from '../projects.js'
import { selfTest } from '../self-test.js'
import { ENV_KINDS, names } from '../store.js'

function visibleTo(ctx: Ctx, project: string): boolean {
  const user = ctx.user
  return !user || user.isAdmin || project in user.scopes
}

export function serverRoutes(route: Route, core: Core): void {
  const projects = new Projects(core.store)
  const usersOf = (project: string) =>
    core.users
      .list()
      .filter((u) => u.isAdmin || project in u.scopes)
      .map((u) => publicUser(u))
  const requireProject = (ctx: Ctx, project: string) => {
    if (!projects.exists(project))
      throw ctx.d.errors.unknownProject(`Project "${project}" could not be found`)
    if (!visibleTo(ctx, project)) throw new HttpError(403, `You have no access to project "${project}"`)
  }

  route('GET', '/api/server/update/check', { auth: 'user' }, () =>
    json({ isBehind: false, remoteVersion: '1.3.0', localVersion: '1.3.0', comment: 'cms-sync emulator' }),
  )

  route('GET', '/api/server/projects', { auth: 'user' }, (ctx) => {
    ctx.userId()
    const ids = projects.ids().filter((p) => visibleTo(ctx, p))
    return json(ctx.query('ids') === 'true' ? ids : ids.map((p) => projects.describe(p, usersOf(p))))
  })

  route('GET', '/api/server/projects/:project', { auth: 'user' }, (ctx) => {
    ctx.userId()
    return json(projects.describe(ctx.project, usersOf(ctx.project)))
  })

  route('GET', '/api/server/:project/environments', { auth: 'user' }, (ctx) => {
    requireProject(ctx, ctx.project)
    return json(projects.environments(ctx.project))
  })

  route('POST', '/api/server/projects/new', { auth: 'admin' }, async (ctx) => {
    const body = await objectBody(ctx)
    if (typeof body.name !== 'string' || body.name.trim() === '')
      throw ctx.d.errors.bad('Expected {"name": string}')
    // Spec also takes a chosen id, so tests and scripts can create a project they can name.
    const id =
      ctx.d.replies.projectIdFromBody && typeof body.id === 'string' && body.id !== '' ? body.id : newId()
    if (projects.exists(id)) throw ctx.d.errors.taken(`Project "${id}" already exists`)
    projects.create(id, body.name)
    return json(projects.describe(id, usersOf(id)))
  })

  route('POST', '/api/server/settings/:project/:section', { auth: 'admin' }, async (ctx) => {
    const value = await ctx.body({ allowArray: true })
    projects.setSettings(ctx.project, 'project', ctx.params.section, value)
    return json(value)
  })

  route('PUT', '/api/server/projects/:project/:env', { auth: 'admin' }, (ctx) => {
    const env = ctx.params.env!
    const problem = badEnvironmentName(env)
    if (problem) throw ctx.d.errors.bad(problem)
    const sync = projects.settings(ctx.project).sync
    if (isObj(sync) && sync.enabled === true)
      throw ctx.d.errors.bad('Cannot add environments to a synced project')
    if (projects.hasEnvironment(ctx.project, env))
      throw ctx.d.errors.taken(`Environment "${env}" already exists`)
    projects.addEnvironment(ctx.project, env)
    return json(projects.environments(ctx.project))
  })

  route('DELETE', '/api/server/projects/:project/:env', { auth: 'admin' }, (ctx) => {
    const env = ctx.params.env!
    if (!projects.hasEnvironment(ctx.project, env)) {
      throw ctx.d.errors.notFound(`Environment "${env}" was not found for project "${ctx.project}"`)
    }
    projects.removeEnvironment(ctx.project, env)
    return ctx.text('OK')
  })

  route('DELETE', '/api/server/projects/:project', { auth: 'admin' }, (ctx) => {
    projects.remove(ctx.project)
    return ctx.text('OK')
  })

  route('POST', '/api/server/migrate/:project', { auth: 'admin' }, async (ctx) => {
    const body = await objectBody(ctx)
    const { from, to } = body
    const settings = isObj(body.settings) ? body.settings : {}
    for (const env of [from, to]) {
      if (typeof env !== 'string' || !projects.hasEnvironment(ctx.project, env)) {
        throw ctx.d.errors.bad(
          `Environment ${JSON.stringify(env)} was not found for project "${ctx.project}"`,
        )
      }
    }
    const kinds = ENV_KINDS.filter((k) => settings[k === 'tree' ? 'media' : k] === true)
    for (const kind of kinds) {
      const source = names.env(ctx.project, from as string, kind)
      const target = names.env(ctx.project, to as string, kind)
      const store = ctx.core.store
      for (const key of store.keys(source)) {
        const existing = store.get<{ blob?: string }>(target, key)
        if (settings.replace !== true && existing) continue
        let value = store.get<{ blob?: string }>(source, key)!
        // Each environment owns its media bytes, so deleting one copy never breaks the other.
        if (kind === 'media' && value.blob)
          value = { ...value, blob: store.writeBlob(store.readBlob(value.blob) ?? Buffer.alloc(0)) }
        store.put(target, key, value)
        if (existing?.blob) store.releaseBlob(existing.blob)
      }
    }
    return ctx.text('OK')
  })

  route('POST', '/api/test', { auth: 'admin', cookieOnly: true }, async (ctx) =>
    ctx.text(await selfTest(ctx)),
  )
}
