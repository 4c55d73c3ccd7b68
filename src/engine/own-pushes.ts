// Our own recent pushes against what the server holds later (state/recent-pushes.ts): a remote
// change that puts a leaf back to its value before our push is an editor's stale full save, not
// an edit of that leaf. Pure functions over file forms; a leaf is a JSON Pointer into the file
// (objects are walked, an array or a scalar is one leaf, as the merge compares them).

import { isDeepStrictEqual } from 'node:util'
import type { PushedLeaf, RecentPush, RevertedLeaf } from '../state/recent-pushes.js'
import { pointerOf, segmentsOf } from './merge/pointer.js'

type Json = unknown

const isObject = (value: Json): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The leaves `after` changed against `before`, with both values (absent: not there). */
export function leafChanges(before: Json, after: Json, at: string[] = []): PushedLeaf[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    return keys.flatMap((key) =>
      leafChanges(
        Object.hasOwn(before, key) ? before[key] : undefined,
        Object.hasOwn(after, key) ? after[key] : undefined,
        [...at, key],
      ),
    )
  }
  if (isDeepStrictEqual(before, after)) return []
  return [
    {
      pointer: pointerOf(at),
      ...(before === undefined ? {} : { before }),
      ...(after === undefined ? {} : { after }),
    },
  ]
}

function valueAt(document: Json, pointer: string): Json {
  let value = document
  for (const segment of segmentsOf(pointer) ?? []) {
    if (!isObject(value) || !Object.hasOwn(value, segment)) return undefined
    value = value[segment]
  }
  return value
}

/** The leaves of our push that `now` (the server's file form) holds at their value from before it. */
export function revertedLeaves(push: Pick<RecentPush, 'leaves'>, now: Json): RevertedLeaf[] {
  const reverted: RevertedLeaf[] = []
  for (const leaf of push.leaves) {
    const current = valueAt(now, leaf.pointer)
    if (!isDeepStrictEqual(current, leaf.before) || isDeepStrictEqual(current, leaf.after)) continue
    reverted.push({
      pointer: leaf.pointer,
      ...(leaf.after === undefined ? {} : { ours: leaf.after }),
      ...(current === undefined ? {} : { server: current }),
    })
  }
  return reverted
}

/** `file` with our values put back at the reverted leaves (a copy; everything else as it is). */
export function withOurLeaves(
  file: Record<string, Json>,
  leaves: readonly RevertedLeaf[],
): Record<string, Json> {
  const copy = structuredClone(file)
  for (const leaf of leaves) {
    const segments = segmentsOf(leaf.pointer)
    if (!segments || segments.length === 0) continue
    let parent: Record<string, Json> = copy
    for (const segment of segments.slice(0, -1)) {
      if (!isObject(parent[segment])) parent[segment] = {}
      parent = parent[segment] as Record<string, Json>
    }
    const last = segments.at(-1)!
    if ('ours' in leaf) parent[last] = structuredClone(leaf.ours)
    else delete parent[last]
  }
  return copy
}

/** One line for people: where, what we pushed, what the server holds now. */
export function describeReverted(leaves: readonly RevertedLeaf[]): string {
  const shown = (value: Json) => {
    if (value === undefined) return '(none)'
    const text = JSON.stringify(value)
    return text.length > 40 ? `${text.slice(0, 37)}...` : text
  }
  return leaves
    .map((leaf) => `${leaf.pointer} (ours ${shown(leaf.ours)}, now ${shown(leaf.server)})`)
    .join(', ')
}
