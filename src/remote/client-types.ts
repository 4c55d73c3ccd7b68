// The remote client's public shape: what the engine, media and the commands code against
// (src/remote/client.ts builds it from the item, listing and form-entry modules).

import type { Logger } from 'pino'
import type { Answer } from './answer.js'
import type { Capabilities, Dialect } from './capabilities.js'
import type { RemoteKind } from './dialect.js'
import type { HttpRequest } from './http.js'
import type { RequestStats } from './queue.js'

export type RemoteObject = Record<string, unknown>
export type { Dialect, RemoteKind }

export interface RemoteClientOptions {
  server: string
  project: string
  environment: string
  token?: string | undefined
  dialect: 'auto' | Dialect
  rateLimit: { requestsPerSecond: number; concurrency: number }
  /** Per request: no answer headers, or no body progress, for this long fails the attempt. */
  timeoutMs?: number
  maxRetries?: number
  tlsInsecure?: boolean
  logger?: Logger | undefined
  /** Backoff between retries; tests shorten it. */
  backoff?: { baseMs: number; capMs: number }
  /** The most one listing may weigh (cms-sync.yaml `limits.listingMB`); 128 MB by default. */
  listMaxBytes?: number
}

/** A listing's validator: its ETag, with the URL it belongs to. */
export interface ListingValidator {
  url: string
  etag: string
  /** Content: the ids whose listed copy names a schedule, recorded with it. */
  dated?: string[]
  /**
   * The listing held an item the server shares with its parent project (inherited, or with a
   * copy there): a 304 to it then says nothing of which ids a by-id read may ask for (items.ts).
   */
  parent?: true
}

/**
 * Where the validators of the listings the bases equal are recorded (the state: StateStore has
 * these methods). Keyed by listing name: a kind's folder name, or `media`.
 */
export interface ListingValidators {
  validatorOf(name: string): ListingValidator | undefined
  dropValidator(name: string): void
}

/** One kind's listing (RemoteClient.listing). */
export interface Listing<T = RemoteObject> {
  /**
   * The items, as `list` gives them (or what `take` kept of each); none when the listing
   * answered 304 (`unchanged`).
   */
  items(): T[]
  /** The 200's validator (ETag and URL), when the server sent one. */
  validator?: ListingValidator
  /** The listing answered 304 to this recorded validator: the server side of the kind is the bases. */
  unchanged?: ListingValidator
}

export interface ListingOptions<T> {
  signal?: AbortSignal
  conditional?: boolean
  /**
   * What to keep of each item, called as the body arrives (the item checked, a form's entries
   * left out): a caller that compares items with what it holds keeps a small stand-in for an
   * unchanged one. Called again from the first item when the read is tried again.
   */
  take?: (item: RemoteObject) => T
}

export interface PutOptions {
  /**
   * The pre-write state the caller planned against. Consulted only after an ambiguous failure:
   * if the re-read item still satisfies it, the write is retried; otherwise the client throws
   * RemoteConflictError rather than overwrite a change it did not see. Without it, a write
   * that did not land is retried (the write was last-writer-wins to begin with).
   */
  expected?: (current: RemoteObject | undefined) => boolean
}

/** Options of `request()`: what HttpRequest documents, minus what the path and method say. */
export type RequestOptions = Pick<
  HttpRequest,
  | 'body'
  | 'contentType'
  | 'headers'
  | 'responseType'
  | 'maxBytes'
  | 'idempotent'
  | 'bodyStream'
  | 'contentLength'
  | 'sink'
  | 'itemId'
  | 'signal'
  | 'digest'
>

export interface RemoteResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer | string | unknown
  /** With `digest`: the sha1 of the 2xx body's bytes. */
  digest?: string
}

export interface RemoteClient {
  readonly dialect: Dialect
  /** What the dialect does and lacks (capabilities.ts): ask it, never the dialect's name. */
  readonly capabilities: Capabilities
  readonly target: { server: string; project: string; environment: string }
  /** The most one listing may weigh; the media listing keeps to it too. */
  readonly listMaxBytes: number
  list(kind: RemoteKind, opts?: { signal?: AbortSignal }): Promise<RemoteObject[]>
  /**
   * The listing as `list` reads it, with its validator. `conditional`: asked with the validator
   * recorded for the listing the bases equal (useValidators), and a 304 is `unchanged`.
   */
  listing<T = RemoteObject>(kind: RemoteKind, opts?: ListingOptions<T>): Promise<Listing<T>>
  /**
   * Whether the kind's listing is still the one its bases equal: one conditional request,
   * answered 304 (watch's quiet poll). False when no validator is recorded.
   */
  listingUnchanged(kind: RemoteKind): Promise<boolean>
  /**
   * Drops the changed listing a check read for the full run that follows (listingUnchanged
   * keeps a 200's answer): a run that did not take it must never read it later, stale.
   */
  forgetCheckedListings(): void
  /** Where the validators are recorded from now on (the run's state); undefined: none. */
  useValidators(validators: ListingValidators | undefined): void
  get(kind: RemoteKind, id: string): Promise<RemoteObject | undefined>
  put(kind: RemoteKind, id: string, body: RemoteObject, opts?: PutOptions): Promise<RemoteObject>
  remove(kind: RemoteKind, id: string): Promise<void>
  /**
   * `POST P/<kind>/pull/:id`: the server copies the item it inherits from its parent project
   * into the project as a local (unlocked) item. Throws RemoteError when it could not.
   */
  pullInherited(kind: RemoteKind, id: string): Promise<void>
  /** `POST P/<kind>/push/:id`: the server sends its local item up to the parent project. */
  pushToParent(kind: RemoteKind, id: string): Promise<void>
  /**
   * `POST P/content/publish|unpublish` with the whole item: the server deploys it through its
   * connection, then writes it again with `isPublished` set (schedule dates included). Returns
   * the item as the server answers it; throws RemoteError with the server's words.
   */
  publish(verb: 'publish' | 'unpublish', item: RemoteObject): Promise<RemoteObject>
  /**
   * Any route, through the same queue, retries and auth. `path` starts with `/`. 2xx and 4xx
   * answers are returned; 5xx and 429 after the retries, redirects, timeouts and network
   * failures throw RemoteError.
   */
  request(method: string, path: string, opts?: RequestOptions): Promise<RemoteResponse>
  /** `request`, with what it came to classified (answer.ts) instead of a status to read. */
  send(method: string, path: string, opts?: RequestOptions): Promise<Answer>
  /**
   * A GET of a listing of another module's (media), with its validator; `conditional`: asked with
   * the validator recorded for the listing its bases equal, and a 304 is `unchanged`.
   */
  readListing(
    name: 'media',
    path: string,
    opts?: Pick<RequestOptions, 'signal'> & { conditional?: boolean },
  ): Promise<{ answer: Answer; validator?: ListingValidator; unchanged?: ListingValidator }>
  /** Whether another module's listing (media) is still the one its bases equal (one 304). */
  listingUnchangedAt(name: 'media', path: string): Promise<boolean>
  /** Drops the validator of another module's listing (media) before the tool's own write to it. */
  forgetListing(name: 'media'): void
  /** The aliases of `GET P/connections/deployers` and `GET P/connections/processors`. */
  connectionTypes(): Promise<{ deployers: string[]; processors: string[] }>
  /** A form's entries (people's submissions), or undefined when there is no such form. */
  formEntries(formId: string): Promise<RemoteObject[] | undefined>
  /** `POST P/forms/clear/:id`: deletes every entry of the form. */
  clearFormEntries(formId: string): Promise<void>
  /**
   * Deletes the given entries (an export's) and only those: entries submitted since the export
   * stay on the server. Returns how many were deleted and how many were kept.
   */
  clearExportedFormEntries(
    formId: string,
    exported: readonly RemoteObject[],
  ): Promise<{ cleared: number; kept: number }>
  /** The logged-in user (`GET /api/user`); UnauthorizedError when there is no valid token. */
  checkToken(): Promise<RemoteObject>
  /**
   * Uses this token from the next request on: a long-running `watch` whose token expired picks
   * up the one a `cms-sync login` in another terminal stored.
   */
  setToken(token: string): void
  /** This client's counters since it was created (the queue and its limit may be shared). */
  stats(): RequestStats
  close(): Promise<void>
}
