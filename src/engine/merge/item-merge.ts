// The merge of one item of a given kind: which leaves the kind has (design.md "Merging": a
// property, one language of a multilingual value, a field of a schema: Codec.mergesWhole), on
// the canonical file forms of the three sides, so only real edits count.

import type { Codec, JsonObject } from '../../workspace/codec.js'
import type { Side } from '../plan.js'
import { type ConflictLeaf, type Json, type MergeResult, mergeJson } from './merge-json.js'

export function mergeItem(
  codec: Pick<Codec, 'mergesWhole'>,
  base: JsonObject,
  local: JsonObject,
  remote: JsonObject,
  choose?: (leaf: ConflictLeaf) => Side | undefined,
): MergeResult {
  const atomic = codec.mergesWhole
  return mergeJson(base as Json, local as Json, remote as Json, {
    ...(atomic ? { atomic } : {}),
    ...(choose ? { choose } : {}),
  })
}
