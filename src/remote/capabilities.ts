// What differs between the `spec` and `upstream` dialects on the client's side
// (docs/api-dialects.md, "Where they differ"), as one typed row per dialect: the client, media,
// codecs, doctor and the schedule ask a row a question instead of testing the dialect's name.
// The server side of the same differences is src/emulator/dialect.ts.

import type { ListingCapabilities } from '../workspace/codec.js'
import { codeForStatus, type RemoteErrorCode } from './errors.js'

export type Dialect = 'spec' | 'upstream'

export interface Capabilities {
  readonly name: Dialect
  readonly auth: {
    /**
     * The cookie works on every route of both dialects (and is the only thing upstream reads on
     * /api/user); spec also takes the token as `Authorization: Bearer`.
     */
    readonly bearerHeader: boolean
  }
  readonly errors: {
    /** The error code of a non-2xx answer; `text` is the server's cleaned message. */
    classify(status: number, text: string): RemoteErrorCode
    /** Whether an answer means "this item does not exist" (not "no such project" or "no such route"). */
    itemMissing(status: number, text: string): boolean
  }
  readonly items: {
    /** Upstream answers a by-id read of an unknown form with an empty form (§12.18). */
    unknownFormIsEmpty: boolean
    /**
     * A form write replaces the stored entries with the body's, none included (upstream); spec
     * keeps the stored entries when the body has none.
     */
    formWriteReplacesEntries: boolean
    /**
     * Upstream forwards a by-id miss to the parent project it inherits from, and turns its own
     * sync off when the parent has no such id either (§9).
     */
    byIdMissAsksParent: boolean
  }
  /** What a kind's listing leaves out (the codecs ask it: Codec.listIsIncomplete). */
  readonly listing: ListingCapabilities
  readonly schemas: {
    /** Listing schemas makes upstream's parent reject `customOnly` and the server turn its sync off (§9). */
    listingDisablesParentSync: boolean
  }
  readonly schedule: {
    /** Where a node's schedule dates are read: spec's `P/schedule/:id`, or the node's own fields. */
    source: 'schedule-route' | 'item-fields'
  }
  readonly media: {
    /** Spec takes media as base64 JSON (`{name, data}`), upstream as a multipart form. */
    upload: 'json-base64' | 'multipart'
    /**
     * Where a new item's id comes from: spec hands them out (`GET P/media/new`), upstream takes
     * any id it is given, so cms-sync makes one and the upload is repeatable.
     */
    newId: 'server' | 'client'
    /**
     * Upstream's media cache folder (`storage/<project>/cache`) is made by a project's first
     * download; until then the cache step of an upload or a delete fails with ENOENT naming it
     * (upstream-server.md 8.4): an upload answers 500 after it stored the file, a delete 404
     * before it deleted anything.
     */
    cacheFolderMissing(text: string): boolean
    /**
     * Concurrent first downloads of an upstream project race on making that folder and the
     * losers answer 404 EEXIST: a transient failure, gone on the next try.
     */
    cacheFolderRace(status: number, text: string): boolean
  }
}

export const TARGET_NOT_FOUND = /(Project "[^"]*" could not be found|Environment "[^"]*" was not found)/
const ROUTE_MISSING = /\bCannot (GET|POST|PUT|DELETE|PATCH|HEAD) \//
const ITEM_NOT_FOUND = /\b(was not found|could not be found|not found)\b/i
/** What upstream says when a write needs the user and the token was missing or bad (§2.3). */
const NULL_USER = /Cannot read propert(y|ies) .*null|of null/
const NEEDS_ADMIN = /You need to be admin|You need the "[^"]*" scope/

/** A 404 that names an item, not the project, the environment or the route. */
function notTargetOrRoute(status: number, text: string): boolean {
  return status === 404 && !TARGET_NOT_FOUND.test(text) && !ROUTE_MISSING.test(text)
}

const spec: Capabilities = {
  name: 'spec',
  auth: { bearerHeader: true },
  errors: {
    classify: (status, text) => (TARGET_NOT_FOUND.test(text) ? 'not-found' : codeForStatus(status)),
    itemMissing: notTargetOrRoute,
  },
  items: { unknownFormIsEmpty: false, formWriteReplacesEntries: false, byIdMissAsksParent: false },
  listing: { scheduleDates: true },
  schemas: { listingDisablesParentSync: false },
  schedule: { source: 'schedule-route' },
  media: {
    upload: 'json-base64',
    newId: 'server',
    cacheFolderMissing: () => false,
    cacheFolderRace: () => false,
  },
}

const upstream: Capabilities = {
  name: 'upstream',
  auth: { bearerHeader: false },
  errors: {
    // Upstream answers 404 for nearly every resource error, validation included (§1.3), and its
    // middleware 400 for project and permission problems (§1.2).
    classify(status, text) {
      if (TARGET_NOT_FOUND.test(text)) return 'not-found'
      if (status === 404 && NULL_USER.test(text)) return 'unauthorized'
      if (status === 404 && (ROUTE_MISSING.test(text) || ITEM_NOT_FOUND.test(text))) return 'not-found'
      if (status === 404) return 'rejected'
      if (status === 400 && NEEDS_ADMIN.test(text)) return 'forbidden'
      return codeForStatus(status)
    },
    itemMissing: (status, text) => notTargetOrRoute(status, text) && ITEM_NOT_FOUND.test(text),
  },
  items: { unknownFormIsEmpty: true, formWriteReplacesEntries: true, byIdMissAsksParent: true },
  // Upstream lists give publishOn and unpublishOn as null: the node's own read has them.
  listing: { scheduleDates: false },
  schemas: { listingDisablesParentSync: true },
  schedule: { source: 'item-fields' },
  media: {
    upload: 'multipart',
    newId: 'client',
    cacheFolderMissing: (text) => /\bENOENT\b.*[/\\]cache\b/.test(text),
    cacheFolderRace: (status, text) => status === 404 && /\bEEXIST\b/.test(text),
  },
}

export const CAPABILITIES: Record<Dialect, Capabilities> = { spec, upstream }

/**
 * Headers that carry the token. Before the dialect is known (its detection), both ways: each
 * server reads the one it knows.
 */
export function authHeaders(capabilities: Capabilities | undefined, token: string): Record<string, string> {
  const headers = cookieHeader(token)
  if (capabilities?.auth.bearerHeader !== false) headers.authorization = `Bearer ${token}`
  return headers
}

/** The token as the cookie, which both dialects read on every route (and the only way on /api/user). */
export function cookieHeader(token: string): Record<string, string> {
  return { cookie: `token=${token}` }
}
