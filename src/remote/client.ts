// The remote API client the engine codes against: list / get / put / remove per kind, in either
// dialect, over the shared transport. It wires the modules that do the work: items.ts (reads,
// writes and the ambiguous-write check), listings.ts, form-entries.ts; what differs between the
// dialects is their capability row (capabilities.ts).

import { responseOf } from './answer.js'
import { probeUser } from './auth.js'
import { authHeaders, CAPABILITIES, type Capabilities } from './capabilities.js'
import { type ClientContext, emptySeen, ITEM_MAX_BYTES, isPlainObject } from './client-context.js'
import type { RemoteClient, RemoteClientOptions, RemoteObject, RequestOptions } from './client-types.js'
import { detectDialect, projectPath, SEGMENT } from './dialect.js'
import { remoteError, routeOf } from './errors.js'
import { clearExportedFormEntries, clearFormEntries, formEntries } from './form-entries.js'
import { createTransport, type HttpRequest, type Transport } from './http.js'
import { get, put, remove, syncCall } from './items.js'
import {
  forgetCheckedListings,
  forgetListing,
  list,
  listing,
  listingUnchanged,
  listingUnchangedSince,
  readListing,
} from './listings.js'

export type {
  Dialect,
  Listing,
  PutOptions,
  RemoteClient,
  RemoteClientOptions,
  RemoteKind,
  RemoteObject,
  RemoteResponse,
  RequestOptions,
} from './client-types.js'
export { isInherited, listingFailure } from './listings.js'

export const DEFAULT_LIST_MAX_BYTES = 128 * 1024 * 1024
/** How long a token check that passed stands for the next runs of the same client. */
const TOKEN_CHECK_VALID_MS = 60_000

/** The transport, asked which dialect the server speaks unless the config says so. */
async function connect(
  opts: RemoteClientOptions,
): Promise<{ transport: Transport; capabilities: Capabilities }> {
  let capabilities: Capabilities | undefined =
    opts.dialect === 'auto' ? undefined : CAPABILITIES[opts.dialect]
  const transport = createTransport({
    server: opts.server,
    rateLimit: opts.rateLimit,
    token: opts.token || undefined,
    authHeaders: (t) => authHeaders(capabilities, t),
    capabilities: () => capabilities,
    timeoutMs: opts.timeoutMs,
    maxRetries: opts.maxRetries,
    tlsInsecure: opts.tlsInsecure,
    logger: opts.logger,
    backoff: opts.backoff,
  })
  try {
    capabilities ??= CAPABILITIES[await detectDialect(transport, opts.project, opts.environment)]
  } catch (error) {
    await transport.close()
    throw error
  }
  opts.logger?.debug({ dialect: capabilities.name }, 'remote dialect')
  return { transport, capabilities }
}

export async function createRemoteClient(opts: RemoteClientOptions): Promise<RemoteClient> {
  const { transport, capabilities } = await connect(opts)
  const ctx: ClientContext = {
    transport,
    P: projectPath(opts.project, opts.environment),
    capabilities,
    logger: opts.logger,
    backoff: opts.backoff,
    maxRetries: opts.maxRetries ?? 4,
    listMaxBytes: opts.listMaxBytes ?? DEFAULT_LIST_MAX_BYTES,
    validators: undefined,
    checked: undefined,
    seen: emptySeen(),
  }
  const token = tokenCheck(transport, opts.token || undefined)
  return {
    dialect: capabilities.name,
    capabilities,
    target: { server: transport.server, project: opts.project, environment: opts.environment },
    listMaxBytes: ctx.listMaxBytes,
    list: (kind, listOpts) => list(ctx, kind, listOpts),
    listing: (kind, listOpts) => listing(ctx, kind, listOpts),
    listingUnchanged: (kind) => listingUnchanged(ctx, kind),
    forgetCheckedListings: () => forgetCheckedListings(ctx),
    useValidators: (validators) => {
      ctx.validators = validators
    },
    get: (kind, id) => get(ctx, kind, id),
    put: (kind, id, body, putOpts) => put(ctx, kind, id, body, putOpts),
    remove: (kind, id) => remove(ctx, kind, id),
    pullInherited: (kind, id) => syncCall(ctx, kind, 'pull', id),
    pushToParent: (kind, id) => syncCall(ctx, kind, 'push', id),
    publish: (verb, item) => publish(ctx, verb, item),
    request: async (method, path, reqOpts) => responseOf(await send(ctx, method, path, reqOpts)),
    send: (method, path, reqOpts) => send(ctx, method, path, reqOpts),
    readListing: async (name, path, reqOpts = {}) => {
      const read = await readListing(
        ctx,
        name,
        {
          method: 'GET',
          path,
          maxBytes: ctx.listMaxBytes,
          ...(reqOpts.signal ? { signal: reqOpts.signal } : {}),
        },
        reqOpts.conditional === true,
      )
      return {
        answer: read.answer,
        ...(read.validator ? { validator: read.validator } : {}),
        ...(read.unchanged ? { unchanged: read.unchanged } : {}),
      }
    },
    listingUnchangedAt: (name, path) => listingUnchangedSince(ctx, name, path),
    forgetListing: (name) => forgetListing(ctx, name),
    connectionTypes: async () => ({
      deployers: await typesOf(ctx, 'deployers'),
      processors: await typesOf(ctx, 'processors'),
    }),
    formEntries: (formId) => formEntries(ctx, formId),
    clearFormEntries: (formId) => clearFormEntries(ctx, formId),
    clearExportedFormEntries: (formId, exported) => clearExportedFormEntries(ctx, formId, exported),
    checkToken: token.check,
    setToken: token.set,
    stats: () => transport.stats(),
    close: () => transport.close(),
  }
}

/**
 * A run checks the token before it writes (engine/plan-and-apply.ts); watch's edit runs come in
 * bursts, so a check that passed stands for a minute rather than costing a request per edit.
 */
function tokenCheck(transport: Transport, initial: string | undefined) {
  let token = initial
  let checked: { at: number; user: RemoteObject } | undefined
  return {
    async check(): Promise<RemoteObject> {
      if (checked && Date.now() - checked.at < TOKEN_CHECK_VALID_MS) return checked.user
      checked = undefined
      const user = await probeUser(transport, token)
      checked = { at: Date.now(), user }
      return user
    },
    set(next: string): void {
      token = next
      checked = undefined
      transport.setToken(next)
    },
  }
}

/** Any route, through the same queue, retries and auth (RemoteClient.send). */
function send(ctx: ClientContext, method: string, path: string, reqOpts: RequestOptions = {}) {
  // `.../new` makes a new item (and `GET P/media/new` a new id) on every call, GET or not:
  // never repeated blindly after an ambiguous failure unless the caller says it is safe.
  const creates = /\/new$/.test(routeOf(path))
  const idempotent = reqOpts.idempotent ?? (creates ? false : undefined)
  return ctx.transport.send({
    method: method.toUpperCase(),
    path,
    ...reqOpts,
    ...(idempotent === undefined ? {} : { idempotent }),
  })
}

async function publish(
  ctx: ClientContext,
  verb: 'publish' | 'unpublish',
  item: RemoteObject,
): Promise<RemoteObject> {
  const id = String(item.id)
  // A publish writes the item again (isPublished, its dates): a write of the content listing.
  forgetListing(ctx, SEGMENT.content)
  const request: HttpRequest = {
    method: 'POST',
    path: `${ctx.P}/content/${verb}`,
    itemId: id,
    // Deploying the same item twice leaves what deploying it once does.
    idempotent: true,
    maxBytes: ITEM_MAX_BYTES,
  }
  const answer = await ctx.transport.send({ ...request, body: item })
  if (answer.kind !== 'ok') throw answer.fail(`could not ${verb} content "${id}"`)
  const { body, status } = answer.response
  if (!isPlainObject(body) || typeof body.id !== 'string')
    throw remoteError('rejected', `the server's answer to ${verb} content "${id}" is not the item`, {
      method: 'POST',
      route: request.path,
      status,
      itemId: id,
    })
  return body
}

async function typesOf(ctx: ClientContext, which: 'deployers' | 'processors'): Promise<string[]> {
  const path = `${ctx.P}/connections/${which}`
  const answer = await ctx.transport.send({ method: 'GET', path })
  if (answer.kind !== 'ok') throw answer.fail(`could not read the server's ${which}`)
  const { body, status } = answer.response
  if (!isPlainObject(body))
    throw remoteError('rejected', `the server's ${which} answer is not a JSON object`, {
      method: 'GET',
      route: path,
      status,
    })
  return Object.keys(body)
}
