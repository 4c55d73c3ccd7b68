// The media API in both dialects (docs/api-dialects.md): listing, streamed download with the
// sha256 taken on the way, streamed upload, rename, tree move, delete. Built on the client's
// request(), so every call goes through the same queue, retries and auth.
//
// New media get an id cms-sync makes up front where it can (upstream: `POST P/media/:id` with
// our own 16-hex id) rather than `POST P/media/new`: the write is then repeatable, so a timeout
// or a dropped connection is retried safely, where `new` could leave an orphan copy under an id
// nobody knows. Spec hands out ids only through `GET P/media/new` (no file until set), so that
// costs one extra request, and a lost answer at worst wastes an empty id.

import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { type Answer, serverText } from './answer.js'
import type { Capabilities } from './capabilities.js'
import type { ListingValidator, RemoteClient, RequestOptions } from './client-types.js'
import { projectPath } from './dialect.js'
import { ListingError, type RemoteError, remoteError, TooLargeError } from './errors.js'
import { listingFailure } from './listings.js'
import { jsonBase64Body, multipartBody, type StreamedBody } from './media-body.js'
import { backoffDelayMs, sleep } from './retry.js'

/** How often a media transfer is tried again after a failure it can tell is passing. */
const MEDIA_RETRIES = 4

/** The sha256 of a local file, streamed. */
async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

export interface RemoteMedia {
  id: string
  /** The file name as the server holds it (upstream rewrites uploaded names). */
  name: string
  /** Folder path without leading or trailing slash, `''` for the root. */
  folder: string
  /** Spec: changes on every upload and rename; upstream: always null. */
  updateDate: string | null
}

/** Spec's JSON body limit (`--max-body-mb`, 50 MB by default); base64 makes 4 bytes of every 3. */
export const JSON_BODY_LIMIT_BYTES = 50 * 1024 * 1024

export function normaliseFolder(folder: unknown): string {
  return String(folder ?? '')
    .split('/')
    .filter(Boolean)
    .join('/')
}

function mediaOf(item: Record<string, unknown>): RemoteMedia {
  return {
    id: String(item.id),
    name: String(item.name ?? ''),
    folder: normaliseFolder(item.folder),
    updateDate: typeof item.updateDate === 'string' ? item.updateDate : null,
  }
}

export interface MediaApi {
  /** The signal gives the listing up (see HttpRequest.signal). */
  list(opts?: { signal?: AbortSignal }): Promise<RemoteMedia[]>
  /**
   * `list`, asked with the validator recorded for the listing the media bases equal: undefined
   * when it answered 304 (the server's media are the bases; nothing downloaded or parsed).
   */
  listUnlessUnchanged(opts?: { signal?: AbortSignal }): Promise<RemoteMedia[] | undefined>
  /** Whether the listing is still the one the media bases equal (see RemoteClient.listingUnchanged). */
  listingUnchanged(): Promise<boolean>
  /** The validator of the last listing `list` accepted, if the server sent one. */
  listedValidator(): ListingValidator | undefined
  /** One item as the server holds it now, or undefined when it is gone. */
  get(id: string): Promise<RemoteMedia | undefined>
  /** Streams the bytes into `dest` (created or truncated) and returns their sha256 and size. */
  download(id: string, dest: string): Promise<{ sha256: string; size: number }>
  /** The sha256 and size of the bytes the server holds, read and dropped; undefined when the item is gone. */
  hash(id: string): Promise<{ sha256: string; size: number } | undefined>
  /**
   * An id for a new item, before its bytes exist: spec's `GET P/media/new`, upstream one cms-sync
   * makes (16 hex). Lets the tree item be placed before the upload makes the item appear.
   */
  newId(): Promise<string>
  /**
   * Uploads a new item, or new bytes for `id`; returns the id and the name the server stored.
   * After an ambiguous answer (a 5xx, a lost connection) the server's bytes are hashed: when they
   * are the file's (`sha256`, else hashed from the file), the upload landed and counts as done.
   */
  upload(
    file: { path: string; size: number; name: string; sha256?: string },
    id?: string,
  ): Promise<{ id: string; name: string }>
  rename(id: string, name: string): Promise<void>
  /** Puts the item in a folder of the media tree (`''` = the root). */
  move(id: string, folder: string): Promise<void>
  remove(id: string): Promise<void>
}

/** 1 GB: media can be large (video), but a server's endless answer must not fill the disk. */
export const DEFAULT_MEDIA_MAX_BYTES = 1024 * 1024 * 1024

/** `maxBytes`: the most one download may weigh (cms-sync.yaml `limits.mediaMB`). */
export function createMediaApi(client: RemoteClient, opts: { maxBytes?: number } = {}): MediaApi {
  return new ClientMedia(client, opts.maxBytes ?? DEFAULT_MEDIA_MAX_BYTES)
}

type LocalFile = { path: string; size: number; name: string; sha256?: string }
const enc = encodeURIComponent

class ClientMedia implements MediaApi {
  private readonly P: string
  private readonly capabilities: Capabilities
  /** The validator of the last listing `list` accepted (the engine records it when the bases equal it). */
  private lastValidator: ListingValidator | undefined
  /**
   * Upstream makes storage/<project>/temp on each upload's way in; when two uploads race to make
   * it (a project's first uploads), the loser's EEXIST is an unhandled rejection that ends the
   * server process (seen by test/upstream/media.test.ts). So this client's first upload goes
   * alone: once it has been answered the folder exists, and the rest may run side by side.
   */
  private firstUpload: Promise<unknown> | undefined

  constructor(
    private readonly client: RemoteClient,
    private readonly maxBytes: number,
  ) {
    this.P = projectPath(client.target.project, client.target.environment)
    this.capabilities = client.capabilities
  }

  /** The request's answer; anything but `ok` thrown as the failure of `what`. */
  private async call(method: string, route: string, what: string, id: string, opts: RequestOptions = {}) {
    const answer = await this.client.send(method, route, { itemId: id, ...opts })
    if (answer.kind !== 'ok') throw answer.fail(what)
    return answer.response
  }

  listingUnchanged(): Promise<boolean> {
    return this.client.listingUnchangedAt('media', `${this.P}/media`)
  }

  listedValidator(): ListingValidator | undefined {
    return this.lastValidator
  }

  async list(opts: { signal?: AbortSignal } = {}): Promise<RemoteMedia[]> {
    return (await this.listing(opts, false))!
  }

  listUnlessUnchanged(opts: { signal?: AbortSignal } = {}): Promise<RemoteMedia[] | undefined> {
    return this.listing(opts, true)
  }

  private async listing(
    opts: { signal?: AbortSignal },
    conditional: boolean,
  ): Promise<RemoteMedia[] | undefined> {
    const route = `${this.P}/media`
    const refuse = (why: string, status?: number) =>
      new ListingError('listing', `could not list media, so nothing was changed: ${why}`, {
        method: 'GET',
        route,
        status,
      })
    let read: Awaited<ReturnType<RemoteClient['readListing']>>
    try {
      read = await this.client.readListing('media', route, {
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(conditional ? { conditional } : {}),
      })
    } catch (error) {
      if (opts.signal?.aborted) throw error
      throw refuse(listingFailure(error as RemoteError, this.client.listMaxBytes))
    }
    const { answer } = read
    this.lastValidator = read.unchanged
    if (read.unchanged) return undefined
    if (answer.kind === 'retry' || answer.kind === 'ambiguous')
      throw refuse(listingFailure(answer.error, this.client.listMaxBytes))
    if (answer.kind !== 'ok') {
      const error = answer.fail('could not list media')
      // A missing or refused token is the user's to fix (log in, exit 2), not a listing to
      // distrust; any other failure, 403 included, is a failed listing: a safety stop (exit 4).
      if (answer.kind === 'unauthorized') throw error
      throw refuse(error.message, answer.response.status)
    }
    const res = answer.response
    if (!Array.isArray(res.body)) throw refuse('the answer is not a JSON array', res.status)
    const seen = new Set<string>()
    const items = res.body.map((item: Record<string, unknown>, index) => {
      if (typeof item?.id !== 'string' || item.id === '' || typeof item.name !== 'string')
        throw refuse(`item ${index} has no string id and name`, res.status)
      if (seen.has(item.id)) throw refuse(`the id "${item.id}" is listed twice`, res.status)
      seen.add(item.id)
      return mediaOf(item)
    })
    this.lastValidator = read.validator
    return items
  }

  async get(id: string): Promise<RemoteMedia | undefined> {
    const route = `${this.P}/media/${enc(id)}`
    const answer = await this.client.send('GET', route, { itemId: id })
    if (answer.kind === 'not-found' && answer.item) return undefined
    if (answer.kind !== 'ok') throw answer.fail(`could not read media "${id}"`)
    const { body, status } = answer.response
    if (typeof body === 'object' && body !== null) return mediaOf(body as Record<string, unknown>)
    throw remoteError('rejected', `could not read media "${id}": the answer is not a JSON object`, {
      method: 'GET',
      route,
      status,
      itemId: id,
    })
  }

  private bytesRoute(id: string): string {
    const { project, environment } = this.client.target
    return `/media/${enc(project)}/${enc(environment)}/${enc(id)}`
  }

  /**
   * GET of an item's bytes into `sink`, and what it came to. Upstream's first downloads of a
   * project race on making its cache folder (404 EEXIST): tried again, as the passing failure
   * it is.
   */
  private async getBytes(id: string, sink: (body: AsyncIterable<Buffer>) => Promise<void>): Promise<Answer> {
    const route = this.bytesRoute(id)
    for (let attempt = 0; ; attempt++) {
      const answer = await this.client.send('GET', route, { itemId: id, maxBytes: this.maxBytes, sink })
      const race =
        answer.kind === 'rejected' &&
        this.capabilities.media.cacheFolderRace(answer.status, serverText(answer))
      if (!race || attempt >= MEDIA_RETRIES) return answer
      await sleep(backoffDelayMs(attempt + 1))
    }
  }

  async download(id: string, dest: string) {
    let result = { sha256: '', size: 0 }
    const route = this.bytesRoute(id)
    try {
      // Called again on a retry: the temp file starts over.
      const answer = await this.getBytes(id, async (body: AsyncIterable<Buffer>) => {
        const hash = createHash('sha256')
        let size = 0
        const tap = new Transform({
          transform(chunk: Buffer, _enc, done) {
            hash.update(chunk)
            size += chunk.length
            done(null, chunk)
          },
        })
        await pipeline(body, tap, createWriteStream(dest))
        result = { sha256: hash.digest('hex'), size }
      })
      if (answer.kind !== 'ok') throw answer.fail(`could not download media "${id}"`)
    } catch (error) {
      // Said with the setting that raises the cap: a real file that large needs it raised.
      const e = error as RemoteError
      if (e.code !== 'too-large' || e.status === 413) throw error
      throw new TooLargeError(
        'too-large',
        `media "${id}" is larger than ${Math.round(this.maxBytes / 1024 / 1024)} MB, the most cms-sync downloads of one file (GET ${route}), so it was not written; if the server really holds files that large, raise limits.mediaMB in cms-sync.yaml`,
        { method: 'GET', route, status: e.status, itemId: id },
      )
    }
    return result
  }

  async hash(id: string) {
    let result = { sha256: '', size: 0 }
    const answer = await this.getBytes(id, async (body) => {
      const digest = createHash('sha256')
      let size = 0
      for await (const chunk of body) {
        digest.update(chunk)
        size += chunk.length
      }
      result = { sha256: digest.digest('hex'), size }
    })
    if (answer.kind === 'not-found' && answer.item) return undefined
    if (answer.kind !== 'ok') throw answer.fail(`could not download media "${id}"`)
    return result
  }

  private bodyFor(file: { path: string; size: number; name: string }, id: string): StreamedBody {
    if (this.capabilities.media.upload === 'multipart') return multipartBody(file.path, file.size, file.name)
    const body = jsonBase64Body(file.path, file.size, file.name)
    if (body.contentLength > JSON_BODY_LIMIT_BYTES) {
      throw remoteError(
        'too-large',
        `${file.name} is ${(file.size / 1024 / 1024).toFixed(1)} MB; the server takes media as base64 JSON of at most ${JSON_BODY_LIMIT_BYTES / 1024 / 1024} MB, i.e. files up to about ${Math.floor((JSON_BODY_LIMIT_BYTES * 3) / 4 / 1024 / 1024)} MB, so it was not sent`,
        { method: 'POST', route: `${this.P}/media/${enc(id)}`, itemId: id },
      )
    }
    return body
  }

  async newId(): Promise<string> {
    if (this.capabilities.media.newId === 'client') return randomBytes(8).toString('hex')
    const res = await this.call('GET', `${this.P}/media/new`, 'could not get a new media id', '', {
      responseType: 'text',
      // Safe to repeat after a 5xx or a dropped answer: it only hands out an id (no item until
      // bytes are set), so a lost one is an id nobody uses.
      idempotent: true,
    })
    return String(res.body).trim()
  }

  async upload(file: LocalFile, existing?: string) {
    if (this.firstUpload === undefined) {
      const first = this.uploadBytes(file, existing)
      this.firstUpload = first.catch(() => {})
      return first
    }
    await this.firstUpload
    return this.uploadBytes(file, existing)
  }

  /**
   * Before each write: the validator says what the server held before it (a server or proxy
   * whose ETag never changes would answer 304 to it for ever).
   */
  private async beforeWrite(): Promise<void> {
    this.lastValidator = undefined
    this.client.forgetListing('media')
  }

  private async uploadBytes(file: LocalFile, existing?: string): Promise<{ id: string; name: string }> {
    await this.beforeWrite()
    const id = existing ?? (await this.newId())
    const body = this.bodyFor(file, id)
    const route = `${this.P}/media/${enc(id)}`
    let sha256 = file.sha256
    for (let attempt = 0; ; attempt++) {
      const answer = await this.client.send('POST', route, {
        itemId: id,
        bodyStream: body.stream,
        contentType: body.contentType,
        contentLength: body.contentLength,
        // Not repeated blindly: after an ambiguous answer the server's bytes are looked at first.
        idempotent: false,
      })
      if (answer.kind === 'ok') return this.uploaded(id, route, file, answer.response.body)
      if (answer.kind !== 'ambiguous') throw answer.fail(`could not upload ${file.name}`)
      // Upstream's first upload of a project answers 500 after storing the file (its cache
      // folder is missing), and any answer may be lost after the server acted: the bytes it
      // holds tell. Hashing them downloads them, which also makes upstream's cache folder.
      const stored = await this.get(id)
      const held = stored && (await this.hash(id))
      sha256 ??= await fileSha256(file.path)
      if (stored && held && held.sha256 === sha256) return { id, name: stored.name }
      if (attempt >= MEDIA_RETRIES) throw answer.error
      // Not landed (or other bytes): the same bytes to the same id, again.
      await sleep(backoffDelayMs(attempt + 1))
    }
  }

  /** The id and the name the server stored for an upload it answered. */
  private async uploaded(id: string, route: string, file: LocalFile, answer: unknown) {
    const named = answer as { name?: unknown } | undefined
    if (typeof named === 'object' && named !== null && typeof named.name === 'string')
      return { id, name: named.name }
    // Upstream answers with the id only, and stores a rewritten name: read it back.
    const stored = await this.call('GET', route, `could not read media "${id}" after its upload`, id)
    return { id, name: String((stored.body as { name?: unknown }).name ?? file.name) }
  }

  async rename(id: string, name: string) {
    await this.beforeWrite()
    const route = `${this.P}/media/rename/${enc(id)}?name=${enc(name)}`
    await this.call('POST', route, `could not rename media "${id}"`, id, { idempotent: true })
  }

  async move(id: string, folder: string) {
    const body = { id, folder: folder === '' ? '/' : `/${folder}/` }
    await this.beforeWrite()
    await this.call('POST', `${this.P}/media/tree/${enc(id)}`, `could not move media "${id}"`, id, {
      body,
      idempotent: true,
    })
  }

  async remove(id: string) {
    await this.beforeWrite()
    const route = `${this.P}/media/${enc(id)}`
    for (let attempt = 0; ; attempt++) {
      const answer = await this.client.send('DELETE', route, { itemId: id })
      if (answer.kind === 'ok' || (answer.kind === 'not-found' && answer.item)) return
      // Upstream's delete on a project without a cache folder deleted nothing (404 ENOENT): one
      // download makes the folder, then the delete works. An item gone meanwhile is deleted.
      const unanswered = answer.kind === 'retry' || answer.kind === 'ambiguous'
      if (attempt === 0 && !unanswered && this.capabilities.media.cacheFolderMissing(serverText(answer))) {
        if ((await this.hash(id)) === undefined) return
        continue
      }
      throw answer.fail(`could not delete media "${id}"`)
    }
  }
}
