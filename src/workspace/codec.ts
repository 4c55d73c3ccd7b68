// One interface for every kind's file format and rules (design.md "Workspace layout"). Adding a
// kind means adding a codec: the scanner, planner, guards and executor only talk to this
// interface, and ask its optional hooks where a kind has a rule of its own (what it names, its
// tree, its publishing, its secrets, its entries) instead of naming kinds.

import { createHash } from 'node:crypto'
import { canonicalJson, sortedJson } from './canonical-json.js'
import { CARRIED_FIELDS, type Kind } from './kinds.js'

export type JsonObject = Record<string, unknown>

/** What the server needs besides the file to write a full document (it replaces, never merges). */
export interface BodyContext {
  /** The item as the server holds it right now, if it exists. */
  current: JsonObject | undefined
  /** The createDate recorded at the last sync, for an item the server lost since (re-created). */
  baseCreateDate?: string | null | undefined
  /** Now, as an ISO string; passed in so codecs stay free of clocks. */
  now: string
  /** Secrets take the server's current value, not their variable's (a secret conflict settled for the server). */
  keepServerSecrets?: boolean
}

/** Cross-file checks that need the other items (e.g. a content's schema must exist). */
export interface ReferenceContext {
  /**
   * Per kind a codec `uses`, every id its items may name; a kind is absent when it is not
   * synced (the server checks).
   */
  ids?: Partial<Record<Kind, { has(id: string): boolean }>> | undefined
  /** The server's deployer and processor types (`GET P/connections/deployers|processors`). */
  deployers?: ReadonlySet<string> | undefined
  processors?: ReadonlySet<string> | undefined
}

/** What a server's listings carry, as its dialect's capability row says (src/remote/capabilities.ts). */
export interface ListingCapabilities {
  /** Each listed content node carries its publishOn and unpublishOn (upstream lists them as null). */
  readonly scheduleDates: boolean
}

export interface Codec {
  kind: Kind
  /** Server object -> file object: only the file-format fields, no volatile ones. */
  toFile(remote: JsonObject): JsonObject
  /** Parsed file JSON -> validated file object, or the problems found (field, expected, got). */
  validate(
    value: unknown,
    expectedId: string,
  ): { ok: true; file: JsonObject } | { ok: false; problems: string[] }
  /** Problems with references to other items, checked just before a write. */
  checkReferences(file: JsonObject, ctx: ReferenceContext): string[]
  /** File object -> the full document to send. */
  toBody(file: JsonObject, ctx: BodyContext): JsonObject
  /** The id of the item this one hangs under (same kind): written first, deleted last. */
  parentOf(file: JsonObject): string | undefined
  /**
   * The file field parentOf reads, set when the server holds the kind as a tree (content): it
   * refuses an item whose parent it lacks, and a parent's delete sets its children's field to
   * null (orphans.ts). Unset where the parent is a link the server does not check (schemas).
   */
  parentField?: string
  /**
   * The item of another kind each item names and the server needs (content: its schema). What
   * is still named once a run is done is not deleted on the server (guards.ts), the writes of
   * those that name it go first (execute.ts), and checkReferences gets the ids of that kind.
   */
  uses?: { kind: Kind; idOf(file: JsonObject): string | undefined }
  /** Ids the server holds without listing them (its built-in schemas): always there to be named. */
  builtInIds?: ReadonlySet<string>
  /** Whether checkReferences needs the server's deployer and processor types (connections). */
  checksServerTypes?: boolean
  /** Whether the server deploys the kind through publish and unpublish (content's `isPublished`). */
  publishes?: boolean
  /**
   * Whether an item holds people's submissions that no file shows (form entries): a delete keeps
   * them in trash first, and a delete that would lose them is guarded.
   */
  holdsEntries?: boolean
  /** The leaves that merge as a whole (a schema's field definition), by their path's segments. */
  mergesWhole?(segments: readonly string[]): boolean
  /**
   * For a kind whose file holds its secrets as `${ENV}` references (connections): whether a base
   * text and a server copy's file form are the same item, any reference equal to any other. The
   * file form takes its references from the file on disk, so its hash says nothing of the server
   * copy; and such a push keeps no leaves beside the state (only references would be there).
   */
  sameApartFromSecrets?(base: unknown, file: JsonObject): boolean
  /** The file form of the server's answer to a write of `sent` (the answer may lack what lists lack). */
  fromWriteAnswer(stored: JsonObject, sent: JsonObject): JsonObject
  /** The marker that changes whenever the item changes on the server. */
  revisionOf(remote: JsonObject): string
  /**
   * The fields a list answer may get wrong (upstream lists give publishOn null): when true,
   * the item must be fetched by id before its file form can be trusted.
   */
  listIsIncomplete(listing: ListingCapabilities): boolean
  /**
   * What the server holds that the file cannot show (a connection secret that differs from its
   * variable): reported by commands that pull, never written.
   */
  remoteProblems?(remote: JsonObject): string[]
  /**
   * The secrets whose variable holds another value than the server (connections): a write of
   * the file would replace the server's secret, which may be newer than the variable. Each by
   * its field path and variable.
   */
  secretsDiffering?(file: JsonObject, remote: JsonObject): { path: string; name: string }[]
  /**
   * Whether the item names a publish or unpublish date (content): status asks the server about
   * those. A marked kept listing remembers the answer for its items (remote-snapshot.ts).
   */
  schedules?(item: JsonObject): boolean
}

/** The kinds whose items name items of `kind` (Codec.uses): content names its schema. */
export function usersOf(codecs: readonly Codec[], kind: Kind): Kind[] {
  return codecs.filter((codec) => codec.uses?.kind === kind).map((codec) => codec.kind)
}

export function hashText(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** The bytes of a file object as cms-sync writes them, and their hash (the item's identity). */
export interface FileBytes {
  text: string
  hash: string
}

export function fileBytes(file: JsonObject): FileBytes {
  const text = canonicalJson(file)
  return { text, hash: hashText(text) }
}

/** The hash a version-1 state recorded for a file object: of its sorted-keys form. */
export function sortedHash(file: JsonObject): string {
  return hashText(sortedJson(file))
}

/**
 * The server-owned fields of the server's current copy that a write carries over (kinds.ts
 * CARRIED_FIELDS): the server resets or rewrites them when a body lacks them, and a file never
 * holds them.
 */
export function carriedFields(current: JsonObject | undefined): JsonObject {
  return current ? pick(current, CARRIED_FIELDS) : {}
}

/** Picks the listed keys that the object has, in the list's order (a file's top-level order). */
export function pick(source: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {}
  for (const key of keys) if (key in source && source[key] !== undefined) out[key] = source[key]
  return out
}
