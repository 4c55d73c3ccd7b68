// Media (§6.5, §8): records and bytes, the folder tree, uploads (JSON base64 in spec,
// multipart field `media` in upstream), rename, delete, and the bytes at /media/:p/:e/:id.

import path from 'node:path'
import { Readable } from 'node:stream'
import { type Core, type Ctx, objectBody, type Route } from '../context.js'
import { isPlainFileName, newId, type Obj } from '../entities.js'
import { HttpError, json, type Reply } from '../http.js'
import { contentTypeOf } from '../mime.js'
import { parentOf, parentTree, remoteSet } from '../parent-sync.js'
import { names } from '../store.js'
import { col, envItem, envItems } from './resource.js'

const P = '/api/:project/:environment'
export type MediaRecord = { id: string; name: string; blob: string; size: number; updateDate: string | null }

/** Upstream's upload rename (§8.2): the first dot-piece, lower-cased with non-word chars as
 * `-`, plus only the second dot-piece as the extension. */
export function upstreamName(original: string): string {
  const [base = '', ext] = original.split('.')
  const clean = base.replace(/\W/g, '-').toLowerCase()
  return ext === undefined ? clean : `${clean}.${ext}`
}

/** How long the emulator's first download of a project spends making the cache folder: long
 * enough that downloads sent side by side meet it, as on the real server. */
const CACHE_MKDIR_MS = 30

export function normaliseFolder(folder: unknown): string {
  const parts = String(folder ?? '')
    .split('/')
    .filter(Boolean)
  return parts.length === 0 ? '/' : `/${parts.join('/')}/`
}

function folderOf(ctx: Ctx, id: string): string {
  const item = envItem(ctx, 'tree', id)
  if (!item || typeof item.folder !== 'string') return '/'
  return ctx.d.media.treeAsArray ? normaliseFolder(item.folder) : item.folder
}

function view(ctx: Ctx, record: MediaRecord, single: boolean): Obj {
  const folder = folderOf(ctx, record.id)
  if (!ctx.d.media.treeAsArray) {
    const url = `/media/${encodeURIComponent(ctx.project)}/${encodeURIComponent(ctx.environment)}/${encodeURIComponent(record.id)}`
    return { id: record.id, name: record.name, folder, url, path: '', updateDate: record.updateDate }
  }
  // Upstream leaks the file's place on the server's disk from GET :id (§5.3).
  const root = ctx.core.store.dataDir ?? '/srv/cms-emulator'
  const diskPath = path.join(root, 'storage', ctx.project, ctx.environment, 'media', record.id, record.name)
  return {
    id: record.id,
    icon: 'file-image-o',
    name: record.name,
    url: single ? '' : `media/${record.id}/${record.name}`,
    path: single ? diskPath : '',
    folder,
    updateDate: null,
    viewedBy: '',
    viewedOn: null,
  }
}

/** Where upstream keeps its download cache: one folder per project (its messages name it). */
function cacheFolder(ctx: Ctx): string {
  return path.join(ctx.core.store.dataDir ?? '/srv/cms-emulator', 'storage', ctx.project, 'cache')
}

/** Whether the project's cache folder is still missing (upstream's bug: see Dialect.media.cacheFolderBug). */
function cacheMissing(ctx: Ctx): boolean {
  return ctx.d.media.cacheFolderBug && !ctx.core.store.has(names.mediaCache(ctx.project), 'folder')
}

/** Upstream's `removeCachedMedia` on a project whose cache folder does not exist yet. */
function missingCacheError(ctx: Ctx, status: number): HttpError {
  return new HttpError(status, `ENOENT: no such file or directory, lstat '${cacheFolder(ctx)}'`)
}

export function storeMedia(ctx: Ctx, id: string, name: string, bytes: Buffer): MediaRecord {
  const old = envItem<MediaRecord>(ctx, 'media', id)
  const record: MediaRecord = {
    id,
    name,
    blob: ctx.core.store.writeBlob(bytes),
    size: bytes.length,
    updateDate: ctx.d.media.setsUpdateDate ? new Date(ctx.core.now()).toISOString() : null,
  }
  ctx.core.store.put(col(ctx, 'media'), id, record)
  if (old) ctx.core.store.releaseBlob(old.blob)
  return record
}

function record(ctx: Ctx, id: string): MediaRecord {
  const found = envItem<MediaRecord>(ctx, 'media', id)
  if (!found) throw ctx.d.errors.notFound(`Media "${id}" not found`)
  return found
}

type UploadFile = { name: string; arrayBuffer(): Promise<ArrayBuffer> }

async function multipartFiles(ctx: Ctx): Promise<UploadFile[]> {
  const type = ctx.req.headers['content-type'] ?? ''
  if (!/^multipart\/form-data/i.test(type)) throw new HttpError(500, 'No files provided')
  let form: FormData
  try {
    const body = Readable.toWeb(ctx.req) as unknown as ReadableStream
    form = await new Response(body, { headers: { 'content-type': type } }).formData()
  } catch (error) {
    throw new HttpError(500, `Could not read the multipart body: ${(error as Error).message}`)
  }
  for (const key of form.keys()) if (key !== 'media') throw new HttpError(500, `Unexpected field "${key}"`)
  const files = form.getAll('media').filter((v) => typeof v !== 'string') as unknown as UploadFile[]
  if (files.length === 0) throw new HttpError(500, 'No files provided')
  return files
}

function plainName(ctx: Ctx, value: unknown, field: string): string {
  if (typeof value !== 'string' || !isPlainFileName(value)) {
    throw ctx.d.errors.bad(
      `"${field}" must be a plain file name (no folders, no control characters), got ${JSON.stringify(value)}`,
    )
  }
  return value
}

function decodeBase64(ctx: Ctx, value: unknown): Buffer {
  const clean = typeof value === 'string' ? value.replace(/\s+/g, '') : undefined
  if (clean === undefined || !/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) {
    throw ctx.d.errors.bad('"base64" must be a string of base64-encoded file data')
  }
  return Buffer.from(clean, 'base64')
}

export function mediaRoutes(route: Route, core: Core): void {
  route('GET', `${P}/media/tree`, { auth: 'user', listing: ['tree'] }, async (ctx) => {
    const inherited = await parentTree(ctx)
    if (inherited !== undefined) return json(inherited)
    const items = envItems(ctx, 'tree')
    if (ctx.d.media.treeAsArray) {
      return json([
        { folder: '/', id: '*' },
        ...items.map((i) => ({ ...i, folder: normaliseFolder(i.folder) })),
      ])
    }
    return json(Object.fromEntries(items.map((i) => [i.id as string, i])))
  })

  route('POST', `${P}/media/tree/:id`, { auth: 'user' }, async (ctx) => {
    const body = await objectBody(ctx)
    if (body.folder !== undefined && typeof body.folder !== 'string' && ctx.d.body.refuseWrongTypes) {
      throw ctx.d.errors.bad('"folder" must be a string such as "/images/"')
    }
    const item = { ...body, id: ctx.params.id! }
    // A project that inherits writes the tree item to its parent too (§9).
    const parent = parentOf(ctx)
    if (parent) await remoteSet(ctx, parent, 'media/tree', ctx.params.id!, item)
    ctx.core.store.put(col(ctx, 'tree'), ctx.params.id!, item)
    return json(item)
  })

  route('GET', `${P}/media`, { auth: 'user', listing: ['media', 'tree'] }, (ctx) =>
    json(envItems<MediaRecord>(ctx, 'media').map((r) => view(ctx, r, false))),
  )

  if (core.d.media.jsonUpload) route('GET', `${P}/media/new`, { auth: 'user' }, (ctx) => ctx.text(newId()))
  else {
    route('POST', `${P}/media/new`, { auth: 'user' }, async (ctx) => {
      const files = await multipartFiles(ctx)
      const ids: string[] = []
      for (const file of files) {
        const id = newId()
        storeMedia(ctx, id, upstreamName(file.name), Buffer.from(await file.arrayBuffer()))
        ids.push(id)
      }
      return json(ids)
    })
  }

  route('POST', `${P}/media/rename/:id`, { auth: 'user' }, async (ctx) => {
    let name = ctx.query('name')
    if (name === undefined && ctx.d.media.jsonUpload) {
      const body = await objectBody(ctx, true)
      if (body.name !== undefined) name = plainName(ctx, body.name, 'name')
    }
    if (name === undefined || name === '') throw new HttpError(400, 'Parameter "name" is required')
    if (ctx.d.media.jsonUpload) plainName(ctx, name, 'name')
    const found = envItem<MediaRecord>(ctx, 'media', ctx.params.id!)
    if (!found) throw ctx.d.errors.notFound(`Media "${ctx.params.id}" not found`)
    const renamed: MediaRecord = {
      ...found,
      name,
      updateDate: ctx.d.media.setsUpdateDate ? new Date(ctx.core.now()).toISOString() : null,
    }
    ctx.core.store.put(col(ctx, 'media'), renamed.id, renamed)
    return ctx.d.replies.mediaRename === 'media' ? json(view(ctx, renamed, true)) : ctx.text(renamed.id)
  })

  route('GET', `${P}/media/:id`, { auth: 'user' }, (ctx) =>
    json(view(ctx, record(ctx, ctx.params.id!), true)),
  )

  route('POST', `${P}/media/:id`, { auth: 'user' }, async (ctx) => {
    const id = ctx.params.id!
    if (!ctx.d.media.jsonUpload) {
      const [file] = await multipartFiles(ctx)
      storeMedia(ctx, id, upstreamName(file!.name), Buffer.from(await file!.arrayBuffer()))
      // The file is stored before the cache step fails: the 500 comes after the write.
      if (cacheMissing(ctx)) throw missingCacheError(ctx, 500)
      return ctx.text(id)
    }
    if (!/^[A-Za-z0-9_-]+$/.test(id) || id === 'new') {
      throw ctx.d.errors.bad(`Media id "${id}" must be letters, digits, "-" or "_" and not a route word`)
    }
    const body = await objectBody(ctx)
    const name = plainName(ctx, body.filename, 'filename')
    return json(view(ctx, storeMedia(ctx, id, name, decodeBase64(ctx, body.base64)), true))
  })

  route('DELETE', `${P}/media/:id`, { auth: 'user' }, (ctx) => {
    // The cache step runs first: nothing is deleted.
    if (cacheMissing(ctx)) throw missingCacheError(ctx, 404)
    const found = record(ctx, ctx.params.id!)
    ctx.core.store.del(col(ctx, 'media'), found.id)
    ctx.core.store.releaseBlob(found.blob)
    if (ctx.d.media.deleteRemovesTreeItem) ctx.core.store.del(col(ctx, 'tree'), found.id)
    return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'OK' }
  })

  // Projects whose first download is making the cache folder right now.
  const makingCache = new Set<string>()

  route('GET', '/media/:project/:environment/:id', { auth: 'none' }, async (ctx): Promise<Reply> => {
    const found = record(ctx, ctx.params.id!)
    if (cacheMissing(ctx)) {
      // Upstream checks that the folder exists, then makes it asynchronously: a download that
      // comes while another is making it tries too, and fails.
      if (makingCache.has(ctx.project))
        throw new HttpError(404, `EEXIST: file already exists, mkdir '${cacheFolder(ctx)}'`)
      makingCache.add(ctx.project)
      try {
        await new Promise((resolve) => setTimeout(resolve, CACHE_MKDIR_MS))
        ctx.core.store.put(names.mediaCache(ctx.project), 'folder', true)
      } finally {
        makingCache.delete(ctx.project)
      }
    }
    const blob = ctx.core.store.openBlob(found.blob)
    if (!blob) throw ctx.d.errors.notFound(`Media "${found.id}" not found`)
    return {
      status: 200,
      headers: { 'content-type': contentTypeOf(found.name), 'cache-control': 'no-cache' },
      body: blob.stream,
      length: blob.size,
    }
  })
}
