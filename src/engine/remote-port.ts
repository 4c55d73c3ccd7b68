// What the engine needs from the server: the parts of src/remote's RemoteClient it calls.
// Kept narrow so the engine depends on behaviour, not on the client's construction.

import type { JsonObject, ListingCapabilities } from '../workspace/codec.js'
import type { Kind } from '../workspace/kinds.js'

export interface RemotePort {
  /** What the server's dialect lists and leaves out (src/remote/capabilities.ts). */
  readonly capabilities: { readonly listing: ListingCapabilities }
  /** Every item of a kind (custom schemas only); throws when the listing failed or is malformed. */
  list(kind: Kind, opts?: { signal?: AbortSignal }): Promise<JsonObject[]>
  /**
   * `list`, with the listing's validator; `conditional`: asked with the validator the state
   * recorded, and a 304 is `unchanged` (no items). `take`: what to keep of each item, called as
   * the body arrives (and from the first item again when the read is tried again). Without it,
   * `list` is used.
   */
  listing?<T = JsonObject>(
    kind: Kind,
    opts?: { signal?: AbortSignal; conditional?: boolean; take?: (item: JsonObject) => T },
  ): Promise<ListingRead<T>>
  /** Whether the kind's listing is still the one its bases equal (one 304); false when not known. */
  listingUnchanged?(kind: Kind): Promise<boolean>
  /**
   * A check that found a listing changed kept its answer for the full run that follows (one
   * download, not two); this drops what that run did not take, so nothing reads it later.
   */
  forgetCheckedListings?(): void
  /** Where the listings' validators are recorded and dropped (the run's StateStore). */
  useValidators?(validators: ValidatorRecord | undefined): void
  /** The item, or undefined when the server does not have it. */
  get(kind: Kind, id: string): Promise<JsonObject | undefined>
  /** Full-document upsert; `expected` re-checks the current item before an ambiguous write is retried. */
  put(
    kind: Kind,
    id: string,
    body: JsonObject,
    opts?: { expected?: (current: JsonObject | undefined) => boolean },
  ): Promise<JsonObject>
  remove(kind: Kind, id: string): Promise<void>
  /** The server's deployer and processor type aliases, checked before a connection is pushed. */
  connectionTypes?(): Promise<{ deployers: string[]; processors: string[] }>
  /** A form's entries (people's submissions), undefined when there is no such form. */
  formEntries?(formId: string): Promise<JsonObject[] | undefined>
  /** `POST P/content/publish|unpublish` with the whole item: deploys it, then stores it again. */
  publish?(verb: 'publish' | 'unpublish', item: JsonObject): Promise<JsonObject>
  /** `P/<kind>/pull/:id`: the server makes a local copy of an item it inherits from its parent. */
  pullInherited(kind: Kind, id: string): Promise<void>
  /**
   * The token's user (`GET /api/user`); throws RemoteError `unauthorized` when the server refuses
   * the token. Upstream reads, and takes schema, form and media writes, without any token, so
   * only this tells a refused token apart before a run writes half of its plan.
   */
  checkToken?(): Promise<unknown>
}

export type { EngineLogger } from '../log/engine-logger.js'

/** A listing's validator (its ETag with its URL); content also notes the ids that name a schedule. */
export interface Validator {
  url: string
  etag: string
  dated?: string[]
}

export interface ValidatorRecord {
  validatorOf(name: string): Validator | undefined
  dropValidator(name: string): void
}

/** One kind's listing as read (RemoteClient.listing). */
export interface ListingRead<T = JsonObject> {
  /** The items (what `take` kept of each); none (it throws) when the listing answered 304. */
  items(): T[]
  /** The 200's validator, when the server sent one. */
  validator?: Validator
  /** Answered 304 to this recorded validator: the server side of the kind is the bases. */
  unchanged?: Validator
}
