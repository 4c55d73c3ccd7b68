// Forms (§6.6, §5.5): definitions with their entries, CSV export, public submit with the
// form's allowed origin and redirect, and clearing the entries.

import { type Core, type Ctx, objectBody, type Route } from '../context.js'
import { build, isObj, type Obj, SHAPES } from '../entities.js'
import { HttpError, json, type Reply } from '../http.js'
import { inheritedItem } from '../parent-sync.js'
import {
  basicRoutes,
  col,
  envItem,
  guardInherited,
  missing,
  requireItem,
  storeWrite,
  writeTarget,
} from './resource.js'

const P = '/api/:project/:environment'

export function buildForm(ctx: Ctx, body: Obj, id: string): Obj {
  return {
    ...build(SHAPES.form, body, ctx.d, 'Form'),
    id,
    isLocked: false,
    sync: { isRemote: false, hasRemote: false },
  }
}

function csv(form: Obj, rfc4180: boolean): string {
  const inputs = Object.keys(isObj(form.inputs) ? form.inputs : {})
  const columns = [...inputs, 'time']
  // Upstream wraps values in quotes without escaping embedded quotes (§6.6).
  const cell = (v: unknown) => {
    const s = v === undefined || v === null ? '' : String(v)
    return `"${rfc4180 ? s.replaceAll('"', '""') : s}"`
  }
  const entries = Array.isArray(form.entries) ? (form.entries as Obj[]) : []
  return [columns.map(cell).join(','), ...entries.map((e) => columns.map((c) => cell(e[c])).join(','))].join(
    '\r\n',
  )
}

/** Filters an entry to the declared inputs and checks required, pattern and duplicates. */
function validateEntry(ctx: Ctx, form: Obj, submitted: Obj): Obj {
  const inputs = (isObj(form.inputs) ? form.inputs : {}) as Record<string, Obj>
  const entries = Array.isArray(form.entries) ? (form.entries as Obj[]) : []
  const entry: Obj = {}
  for (const [name, input] of Object.entries(inputs)) {
    const raw = submitted[name]
    const value = raw === undefined || raw === null ? '' : String(raw)
    if (input.required && value === '') throw ctx.d.errors.bad(`Field "${name}" is required`)
    if (typeof input.pattern === 'string' && input.pattern !== '' && value !== '') {
      let ok = true
      try {
        ok = new RegExp(input.pattern).test(value)
      } catch {
        ok = true
      }
      if (!ok) throw ctx.d.errors.bad(`Field "${name}" does not match the required pattern`)
    }
    if (input.checkDuplicates && entries.some((e) => String(e[name]) === value)) {
      throw ctx.d.errors.bad(`An entry with this value of "${name}" already exists`)
    }
    entry[name] = value
  }
  entry.time = new Date(ctx.core.now()).toISOString()
  return entry
}

function cors(form: Obj): Record<string, string> {
  const origin =
    typeof form.allowedOrigin === 'string' && form.allowedOrigin !== '' ? form.allowedOrigin : '*'
  return { 'access-control-allow-origin': origin }
}

export function formRoutes(route: Route, core: Core): void {
  const lastSubmit = new Map<string, number>()

  basicRoutes(route, 'forms', 'Form', (ctx, id) => buildForm(ctx, { title: 'New form' }, id))

  route('POST', `${P}/forms/clear/:id`, { auth: 'user' }, (ctx) => {
    const form = requireItem(ctx, 'forms', 'Form')
    ctx.core.store.put(col(ctx, 'forms'), ctx.params.id!, { ...form, entries: [] })
    return ctx.text('OK')
  })

  route('GET', `${P}/forms/:id/entries`, { auth: 'user' }, (ctx) => {
    const form = requireItem(ctx, 'forms', 'Form')
    const title = String(form.title || 'form').replace(/\W+/g, '-')
    return {
      status: 200,
      headers: {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename=${title}_${new Date(ctx.core.now()).toISOString()}.csv`,
      },
      body: csv(form, ctx.d.forms.rfc4180Csv),
    }
  })

  route('GET', `${P}/forms/:id`, { auth: 'user' }, async (ctx) => {
    const form = envItem(ctx, 'forms', ctx.params.id!) ?? (await inheritedItem(ctx, 'forms', ctx.params.id!))
    if (form) return json(form)
    if (ctx.d.forms.unknownGetIsEmptyForm) return json(buildForm(ctx, {}, ''))
    throw missing(ctx, 'Form', ctx.params.id!)
  })

  route('POST', `${P}/forms/:id`, { auth: 'user' }, async (ctx) => {
    const body = await objectBody(ctx)
    const target = writeTarget(ctx, 'forms', 'Form', body)
    await guardInherited(ctx, 'forms', 'Form', target)
    const keepEntries = ctx.d.forms.setKeepsEntriesWhenAbsent && !('entries' in body)
    const form = buildForm(
      ctx,
      keepEntries ? { ...body, entries: target.existing?.entries ?? [] } : body,
      target.id,
    )
    storeWrite(ctx, 'forms', target, form)
    return ctx.d.forms.setReturnsForm ? json(form) : ctx.text('OK')
  })

  route('DELETE', `${P}/forms/:id`, { auth: 'user' }, (ctx) => {
    const id = ctx.params.id!
    if (!envItem(ctx, 'forms', id) && !ctx.d.writes.deleteUnknownOk) throw missing(ctx, 'Form', id)
    ctx.core.store.del(col(ctx, 'forms'), id)
    return ctx.text(`Form with id "${id}" deleted successfully`)
  })

  route('OPTIONS', `${P}/forms/:id/submit`, { auth: 'none' }, (ctx) => {
    const form = requireItem(ctx, 'forms', 'Form')
    return {
      status: 204,
      headers: {
        ...cors(form),
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'Content-Type',
        'access-control-max-age': '600',
      },
    }
  })

  route('POST', `${P}/forms/:id/submit`, { auth: 'none' }, async (ctx): Promise<Reply> => {
    const form = requireItem(ctx, 'forms', 'Form')
    const headers = cors(form)
    const origin = ctx.req.headers.origin
    if (
      origin &&
      headers['access-control-allow-origin'] !== '*' &&
      origin !== headers['access-control-allow-origin']
    ) {
      const refused = ctx.d.forms.originRefused(origin)
      throw new HttpError(refused.status, refused.message, headers)
    }
    const ip = ctx.req.socket.remoteAddress ?? ''
    const last = lastSubmit.get(ip)
    if (
      core.d.forms.spamGuardMs > 0 &&
      last !== undefined &&
      ctx.core.now() - last < core.d.forms.spamGuardMs
    ) {
      throw new HttpError(400, 'Too many submissions, please wait a moment', headers)
    }
    lastSubmit.set(ip, ctx.core.now())
    const submitted = /urlencoded/i.test(ctx.req.headers['content-type'] ?? '')
      ? Object.fromEntries(new URLSearchParams((await ctx.raw()).toString('utf8')))
      : await objectBody(ctx, true)
    let entry: Obj
    try {
      entry = validateEntry(ctx, form, submitted)
    } catch (error) {
      if (error instanceof HttpError) throw new HttpError(error.status, error.message, headers)
      throw error
    }
    const entries = Array.isArray(form.entries) ? form.entries : []
    ctx.core.store.put(col(ctx, 'forms'), ctx.params.id!, { ...form, entries: [...entries, entry] })
    if (typeof form.redirect === 'string' && form.redirect !== '') {
      const referer = ctx.req.headers.referer ?? ''
      return {
        status: 302,
        headers: { ...headers, location: form.appendRedirect ? referer + form.redirect : form.redirect },
      }
    }
    const done = ctx.d.forms.submitWithoutRedirect
    const reply = ctx.text(done.body, done.status)
    return { ...reply, headers: { ...reply.headers, ...headers } }
  })
}
