// Everything that differs between the `spec` and `upstream` dialects (docs/api-dialects.md,
// "Where they differ"), in one table per concern, so handlers ask a question instead of
// testing the dialect name.

import { HttpError } from './http.js'

export type DialectName = 'spec' | 'upstream'

export type Dialect = {
  name: DialectName
  /** Upstream answers strings as Express does (text/html); spec says what it sends. */
  textType: 'text/plain' | 'text/html'
  /**
   * What a listing's ETag is made of. Upstream (Express) builds the body and hashes it for every
   * GET, a 304 included (reference/upstream-server.md). Spec counts writes per collection, so a
   * conditional listing is answered before its body is built: the bench's floors then measure
   * the client, not the emulator (etag.ts).
   */
  listingEtag: 'version' | 'body'
  errors: {
    /** A malformed request: wrong type, missing field, bad parameter. */
    bad(message: string): HttpError
    notFound(message: string): HttpError
    /** An id that is already taken. */
    taken(message: string): HttpError
    unknownProject(message: string): HttpError
    /** A valid caller without the right (a scope, an origin): spec 403, upstream's middleware 400. */
    refused(message: string): HttpError
  }
  users: {
    taken(message: string): HttpError
    missingOnDelete(message: string): HttpError
    /** Upstream answers a user update with an empty body (it does not even await it). */
    updateReturnsUser: boolean
  }
  replies: {
    contentDelete: 'id' | 'message'
    connectionDelete: 'connection' | 'message'
    mediaRename: 'media' | 'id'
    /** Spec lets POST /api/server/projects/new choose the id; upstream always makes one. */
    projectIdFromBody: boolean
  }
  auth: {
    bearerHeader: boolean
    /** Spec refuses anonymous callers on protected routes; upstream lets them through. */
    rejectAnonymous: boolean
    notAdmin(): HttpError
    badLogin(message: string): HttpError
    /** Routes upstream reads only the cookie on (§2.3). */
    cookieOnlyRoutes: boolean
    /** What a handler that needs the user's id fails with when there is none. */
    noUser(): HttpError
  }
  body: {
    /** Spec refuses a body that is not declared JSON; upstream reads it as `{}` (§1.1). */
    requireJsonType: boolean
    /** Spec refuses a wrong-typed field; upstream drops it silently (§4). */
    refuseWrongTypes: boolean
  }
  writes: {
    /** Upstream stores the body id (missing -> ""); spec takes the URL id and refuses a different one. */
    bodyIdWins: boolean
    /** A set on an unknown id without ?create=true: spec 404, upstream 200 storing nothing. */
    silentNoopWithoutCreate: boolean
    /** Deleting an unknown content/connection/form id: spec 404, upstream 200. */
    deleteUnknownOk: boolean
  }
  content: {
    /** Upstream turns a missing createDate into 1970-01-01; spec keeps the stored one. */
    missingCreateDateIsEpoch: boolean
    listShowsSchedule: boolean
    deleteWholeSubtree: boolean
    /** Upstream leaves the schedule tasks of deleted nodes behind (§11). */
    deleteRemovesSchedule: boolean
    orphanParentId: string | null
    /** Upstream nulls the orphans' parentId without touching their updateDate (upstream §11). */
    orphanKeepsUpdateDate: boolean
    /** Upstream's insert renumbers every non-root node when the target is not at the root (§6.2). */
    insertRenumbersAllNonRoot: boolean
    /** Upstream's insert rewrites nodes read from the list (publishOn null), dropping their tasks (§12.13). */
    insertDropsSchedule: boolean
  }
  schemas: {
    singularListRoute: boolean
    customOnlyBroken: boolean
    importPath: 'import' | 'schemas/import'
    refuseNativeWrite: boolean
  }
  /** The server's own Sync feature between two instances (§9; src/emulator/parent-sync.ts). */
  sync: {
    /** Without a parent: spec refuses push and pull; upstream pushes nothing and says so with 200. */
    pushWithoutParentOk: boolean
    /** What a successful push answers: the local item, its id, or `OK`. */
    pushReply: Record<'content' | 'schemas' | 'connections' | 'forms', 'item' | 'id' | 'OK'>
    /** Upstream answers pull with the remote item, still flagged remote and locked. */
    pullReply: Record<'content' | 'schemas' | 'connections' | 'forms', 'item' | 'remote-item' | 'id' | 'OK'>
    /** Upstream turns sync off on any failed read of the parent (a 404 by id included). */
    disableOnRemoteFailure: boolean
    /** The query the parent's schema list is read with: upstream asks customOnly, which trips. */
    schemaListQuery: string
    /** A create on an inherited id without pull: spec refuses (409), upstream makes it local. */
    writeInherited: 'refuse' | 'becomes-local'
  }
  media: {
    jsonUpload: boolean
    treeAsArray: boolean
    setsUpdateDate: boolean
    rewriteUploadNames: boolean
    deleteRemovesTreeItem: boolean
    /**
     * Upstream's cache-folder bug (upstream-server.md 8.4): a project's media cache folder is
     * made by its first download; until then an upload answers 500 ENOENT after storing the
     * file, a delete answers 404 ENOENT and deletes nothing, and concurrent first downloads
     * race on making the folder (404 EEXIST). EmulatorOptions.mediaCacheReady turns it off.
     */
    cacheFolderBug: boolean
  }
  forms: {
    unknownGetIsEmptyForm: boolean
    setReturnsForm: boolean
    setKeepsEntriesWhenAbsent: boolean
    rfc4180Csv: boolean
    submitWithoutRedirect: { status: number; body: string }
    spamGuardMs: number
    originRefused(origin: string): HttpError
  }
  scheduleAlwaysEmpty: boolean
  configUnreachable: boolean
}

const spec: Dialect = {
  name: 'spec',
  textType: 'text/plain',
  listingEtag: 'version',
  errors: {
    bad: (m) => new HttpError(400, m),
    notFound: (m) => new HttpError(404, m),
    taken: (m) => new HttpError(409, m),
    unknownProject: (m) => new HttpError(404, m),
    refused: (m) => new HttpError(403, m),
  },
  users: {
    taken: (m) => new HttpError(409, m),
    missingOnDelete: (m) => new HttpError(404, m),
    updateReturnsUser: true,
  },
  replies: {
    contentDelete: 'id',
    connectionDelete: 'connection',
    mediaRename: 'media',
    projectIdFromBody: true,
  },
  auth: {
    bearerHeader: true,
    rejectAnonymous: true,
    notAdmin: () => new HttpError(403, 'You need to be admin to do that'),
    badLogin: (m) => new HttpError(401, m),
    cookieOnlyRoutes: false,
    noUser: () => new HttpError(401, 'Not logged in'),
  },
  body: { requireJsonType: true, refuseWrongTypes: true },
  writes: { bodyIdWins: false, silentNoopWithoutCreate: false, deleteUnknownOk: false },
  content: {
    missingCreateDateIsEpoch: false,
    listShowsSchedule: true,
    deleteWholeSubtree: true,
    deleteRemovesSchedule: true,
    orphanParentId: '',
    orphanKeepsUpdateDate: false,
    insertRenumbersAllNonRoot: false,
    insertDropsSchedule: false,
  },
  schemas: {
    singularListRoute: true,
    customOnlyBroken: false,
    importPath: 'import',
    refuseNativeWrite: true,
  },
  sync: {
    pushWithoutParentOk: false,
    pushReply: { content: 'id', schemas: 'item', connections: 'id', forms: 'item' },
    pullReply: { content: 'item', schemas: 'item', connections: 'id', forms: 'item' },
    disableOnRemoteFailure: false,
    schemaListQuery: '',
    writeInherited: 'refuse',
  },
  media: {
    jsonUpload: true,
    treeAsArray: false,
    setsUpdateDate: true,
    rewriteUploadNames: false,
    deleteRemovesTreeItem: true,
    cacheFolderBug: false,
  },
  forms: {
    unknownGetIsEmptyForm: false,
    setReturnsForm: true,
    setKeepsEntriesWhenAbsent: true,
    rfc4180Csv: true,
    submitWithoutRedirect: { status: 200, body: 'OK' },
    spamGuardMs: 0,
    originRefused: (origin) => new HttpError(403, `Origin "${origin}" may not submit this form`),
  },
  scheduleAlwaysEmpty: false,
  configUnreachable: false,
}

// Upstream's resource controllers answer nearly every failure with 404 (§1.3) and its
// middleware answers project and permission problems with 400 (§1.2).
const upstream: Dialect = {
  name: 'upstream',
  textType: 'text/html',
  listingEtag: 'body',
  errors: {
    bad: (m) => new HttpError(404, m),
    notFound: (m) => new HttpError(404, m),
    taken: (m) => new HttpError(404, m),
    unknownProject: (m) => new HttpError(400, m),
    refused: (m) => new HttpError(400, m),
  },
  users: {
    taken: (m) => new HttpError(400, m),
    missingOnDelete: (m) => new HttpError(502, m),
    updateReturnsUser: false,
  },
  replies: {
    contentDelete: 'message',
    connectionDelete: 'message',
    mediaRename: 'id',
    projectIdFromBody: false,
  },
  auth: {
    bearerHeader: false,
    rejectAnonymous: false,
    notAdmin: () => new HttpError(400, 'You need to be admin to do that'),
    badLogin: (m) => new HttpError(403, m),
    cookieOnlyRoutes: true,
    noUser: () => new HttpError(404, "Cannot read properties of null (reading 'id')"),
  },
  body: { requireJsonType: false, refuseWrongTypes: false },
  writes: { bodyIdWins: true, silentNoopWithoutCreate: true, deleteUnknownOk: true },
  content: {
    missingCreateDateIsEpoch: true,
    listShowsSchedule: false,
    deleteWholeSubtree: false,
    deleteRemovesSchedule: false,
    orphanParentId: null,
    orphanKeepsUpdateDate: true,
    insertRenumbersAllNonRoot: true,
    insertDropsSchedule: true,
  },
  schemas: {
    singularListRoute: false,
    customOnlyBroken: true,
    importPath: 'schemas/import',
    refuseNativeWrite: false,
  },
  sync: {
    pushWithoutParentOk: true,
    pushReply: { content: 'id', schemas: 'id', connections: 'OK', forms: 'OK' },
    pullReply: { content: 'remote-item', schemas: 'remote-item', connections: 'OK', forms: 'remote-item' },
    disableOnRemoteFailure: true,
    schemaListQuery: 'customOnly=true&',
    writeInherited: 'becomes-local',
  },
  media: {
    jsonUpload: false,
    treeAsArray: true,
    setsUpdateDate: false,
    rewriteUploadNames: true,
    deleteRemovesTreeItem: false,
    cacheFolderBug: true,
  },
  forms: {
    unknownGetIsEmptyForm: true,
    setReturnsForm: false,
    setKeepsEntriesWhenAbsent: false,
    rfc4180Csv: false,
    submitWithoutRedirect: { status: 404, body: 'Not found' },
    spamGuardMs: 1000,
    originRefused: () => new HttpError(400, 'Unauthorized'),
  },
  scheduleAlwaysEmpty: true,
  configUnreachable: true,
}

export const DIALECTS: Record<DialectName, Dialect> = { spec, upstream }
