// The merge of one item of a given kind: which leaves the kind has (design.md "Merging": a
// property, one language of a multilingual value, a field of a schema), on the canonical
// file forms of the three sides, so only real edits count.

import type { JsonObject } from '../../workspace/codec.js'
import type { Kind } from '../../workspace/kinds.js'
import type { Side } from '../plan.js'
import { type ConflictLeaf, type Json, type MergeResult, mergeJson } from './merge-json.js'

/**
 * A schema's field definition (`/fields/<group>/<key>`: label, schemaId, editor config) is one
 * leaf: two edits inside one definition may not fit together (a new editor with the old
 * editor's config), so they are a conflict, while fields added or changed on different keys merge.
 */
function atomicOf(kind: Kind): ((segments: readonly string[]) => boolean) | undefined {
  if (kind === 'schema') return (segments) => segments.length === 3 && segments[0] === 'fields'
  return undefined
}

export function mergeItem(
  kind: Kind,
  base: JsonObject,
  local: JsonObject,
  remote: JsonObject,
  choose?: (leaf: ConflictLeaf) => Side | undefined,
): MergeResult {
  const atomic = atomicOf(kind)
  return mergeJson(base as Json, local as Json, remote as Json, {
    ...(atomic ? { atomic } : {}),
    ...(choose ? { choose } : {}),
  })
}
