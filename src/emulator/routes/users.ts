// The User group (§6.1): login, logout, the current user, and user administration.

import { hashPassword, publicUser, type User, verifyPassword } from '../auth.js'
import { type Core, type Ctx, objectBody, type Route } from '../context.js'
import { isObj } from '../entities.js'
import { HttpError, json, type Reply } from '../http.js'

function credentials(ctx: Ctx, body: Record<string, unknown>): { username: string; password: string } {
  const { username, password } = body
  if (typeof username !== 'string' || typeof password !== 'string' || username === '') {
    throw ctx.d.body.refuseWrongTypes
      ? new HttpError(400, 'Expected {"username": string, "password": string}')
      : ctx.d.auth.badLogin(`No user "${String(username ?? '')}" found`)
  }
  return { username, password }
}

function loggedIn(ctx: Ctx, token: string): Reply {
  return {
    ...ctx.text(token),
    headers: { ...ctx.text(token).headers, 'set-cookie': `token=${token}; Path=/` },
  }
}

function me(ctx: Ctx): User {
  if (!ctx.user)
    throw ctx.d.auth.rejectAnonymous
      ? new HttpError(401, 'Not logged in')
      : new HttpError(403, 'Not logged in')
  return ctx.user
}

export function userRoutes(route: Route, core: Core): void {
  const users = core.users

  route('POST', '/api/user/login', { auth: 'none' }, async (ctx) => {
    const { username, password } = credentials(ctx, await objectBody(ctx))
    const user = users.byName(username)
    if (!user) throw ctx.d.auth.badLogin(`No user "${username}" found`)
    if (!(await verifyPassword(password, user.password))) throw ctx.d.auth.badLogin('Invalid password')
    const persist = ctx.query('persist') === 'true' || ctx.query('persist') === '1'
    return loggedIn(ctx, users.issueToken(user, persist))
  })

  route('POST', '/api/user/logout', { auth: 'none', cookieOnly: true }, (ctx) => {
    me(ctx)
    if (ctx.token) users.revokeToken(ctx.token)
    return { status: 302, headers: { location: '/', 'set-cookie': 'token=; Path=/; Max-Age=0' } }
  })

  route('GET', '/api/user', { auth: 'none', cookieOnly: true }, (ctx) => json(publicUser(me(ctx))))
  route('GET', '/api/user/scopes', { auth: 'none', cookieOnly: true }, (ctx) => json(me(ctx).scopes))

  route('GET', '/api/users', { auth: 'admin' }, (ctx) => {
    const current = ctx.userId()
    const sortKey = (u: User) => u.fullName || u.username || u.email
    return json(
      users
        .list()
        .sort((a, b) => sortKey(a).localeCompare(sortKey(b)))
        .map((u) => publicUser(u, current)),
    )
  })

  route('POST', '/api/users/first', { auth: 'none' }, async (ctx) => {
    if (users.list().length > 0) throw new HttpError(403, 'There are already users on this server')
    const { username, password } = credentials(ctx, await objectBody(ctx))
    const user = await users.create({ username, password, isAdmin: true })
    return loggedIn(ctx, users.issueToken(user, false))
  })

  route('POST', '/api/users/new', { auth: 'admin' }, async (ctx) => {
    const body = await objectBody(ctx)
    const { username, password } = credentials(ctx, body)
    if (users.byName(username))
      throw new HttpError(ctx.d.name === 'spec' ? 409 : 400, `Username "${username}" is taken`)
    return json(publicUser(await users.create({ ...body, username, password })))
  })

  route('GET', '/api/users/:id', { auth: 'admin' }, (ctx) => {
    const user = users.byId(ctx.params.id!)
    if (!user) throw new HttpError(404, `User "${ctx.params.id}" not found`)
    return json(publicUser(user))
  })

  route('POST', '/api/users/:id', { auth: 'user', cookieOnly: true }, async (ctx) => {
    const caller = me(ctx)
    const target = users.byId(ctx.params.id!)
    if (!target) throw new HttpError(404, `User "${ctx.params.id}" not found`)
    const mayManage = caller.isAdmin || Object.values(caller.scopes).some((s) => s.includes('users'))
    if (caller.id !== target.id && !mayManage)
      throw new HttpError(ctx.d.name === 'spec' ? 403 : 400, 'You need the "users" scope to do that')
    const body = await objectBody(ctx)
    for (const key of ['fullName', 'email', 'username'] as const) {
      if (typeof body[key] === 'string') target[key] = body[key]
    }
    if (mayManage && typeof body.isAdmin === 'boolean') target.isAdmin = body.isAdmin
    if (mayManage && isObj(body.scopes)) target.scopes = body.scopes as Record<string, string[]>
    if (typeof body.password === 'string' && body.password !== '') {
      target.password = await hashPassword(body.password)
    }
    users.save(target)
    return ctx.d.name === 'spec' ? json(publicUser(target)) : { status: 200, body: '' }
  })

  route('DELETE', '/api/users/:id', { auth: 'admin' }, (ctx) => {
    if (!users.byId(ctx.params.id!))
      throw new HttpError(ctx.d.name === 'spec' ? 404 : 502, `User "${ctx.params.id}" not found`)
    users.remove(ctx.params.id!)
    return { status: 200, body: '' }
  })
}
