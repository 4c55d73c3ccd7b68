// The merges of a plan (design.md "Merging"): for every item the planner found changed on both
// sides, the base text, the local file and the server copy go through the pure merge
// (src/engine/merge/), and the item becomes a `merge` (both sides get the result) or stays a
// `conflict` that names its leaves. Status, diff, pull, push, sync, resolve and watch all plan
// through here, so they all see the same merges. Only these items read a base: a run where
// nothing changed on both sides opens no base at all.

import type { BaseStore } from '../state/base-store.js'
import type { StateStore } from '../state/state-file.js'
import { type Codec, fileBytes, hashText, type JsonObject } from '../workspace/codec.js'
import { readLocalFile } from '../workspace/local-file.js'
import type { LocalEntry } from '../workspace/scan.js'
import { mergeItem } from './merge/item-merge.js'
import type { ConflictLeaf } from './merge/merge-json.js'
import { bothModified, type PlanItem, type Side } from './plan.js'
import type { RemotePort } from './remote-port.js'
import { fullObject, type RemoteEntry } from './remote-snapshot.js'

export interface SideText {
  file: JsonObject
  text: string
  hash: string
}

export interface PlannedMerge {
  /** What the file becomes: the merge, with any leaf still in conflict at its local value. */
  local: SideText
  /** What the server copy becomes: the merge, with any leaf still in conflict at its remote value. */
  remote: SideText
  /** Every leaf agrees: `local` and `remote` are the one merged document. */
  settled: boolean
  /** The sides the merge started from (the base of a pull's or a push's half). */
  before: { local: SideText; remote: SideText }
  /** Leaves settled by --prefer or resolve --keep, with the side kept. */
  chosen: Array<ConflictLeaf & { kept: Side }>
}

/**
 * Finds a base's text that is not kept locally (a fresh clone: from git, by the lock's hash).
 * `orders` are the two sides' documents: a committed version whose value is the base's but
 * whose key order is not (a file of the sorted-keys version) is found in their order.
 */
export type BaseFallback = (
  item: PlanItem,
  hash: string,
  codec: Codec,
  orders: readonly JsonObject[],
) => Promise<string | undefined>

export interface MergeDeps {
  root: string
  client: RemotePort
  codecs: readonly Codec[]
  bases: BaseStore
  baseFallback?: BaseFallback
  /** Why the fallback found no base, when something can be done about it (a shallow clone). */
  whyNoBase?: () => Promise<string | undefined>
}

export interface MergeChoices {
  /** Settles every conflicting leaf for this side (--prefer, resolve --keep on a whole file). */
  prefer?: Side
  /**
   * resolve --keep on single leaves: the leaves (JSON Pointers, a leaf or a subtree) settled per
   * path. A path named here settles only these leaves; the rest stay conflicts.
   */
  leaves?: ReadonlyMap<string, readonly string[]>
}

function sideText(file: JsonObject): SideText {
  const bytes = fileBytes(file)
  return { file, ...bytes }
}

const within = (inner: string, outer: string) => inner === outer || inner.startsWith(`${outer}/`)

/**
 * Turns the plan's both-changed items into merges or leaf conflicts, in place, and returns the
 * merges by path. An item that cannot be merged keeps the planner's decision (with --prefer:
 * the whole file of one side, as before there was a base text to merge against).
 */
export async function planMerges(
  deps: MergeDeps,
  store: StateStore,
  items: readonly PlanItem[],
  local: ReadonlyMap<string, LocalEntry>,
  remote: ReadonlyMap<string, RemoteEntry>,
  choices: MergeChoices = {},
): Promise<Map<string, PlannedMerge>> {
  const merges = new Map<string, PlannedMerge>()
  // Merged where the kind has a codec (a JSON kind): media bytes are never merged.
  const candidates = items.filter(bothModified)
  for (const item of candidates) {
    const codec = deps.codecs.find((c) => c.kind === item.kind)
    const base = store.get(item.path)
    const entry = remote.get(item.path)
    if (!codec || !base || !entry || !local.has(item.path)) continue
    const planned = await mergeOne(deps, codec, item, base.baseHash, entry, choices)
    if (typeof planned === 'string') {
      // No merge: with a per-leaf choice the whole file must not be settled behind the user's back.
      if (choices.leaves?.has(item.path)) {
        item.action = 'conflict'
        delete item.settledFor
      }
      if (item.action === 'conflict') item.reason = planned
      continue
    }
    const { merge, conflicts } = planned
    delete item.settledFor
    if (merge.chosen.length > 0) item.settledFor = merge.chosen[0]!.kept
    if (conflicts.length > 0) item.leaves = conflicts
    if (merge.settled && merge.local.hash === merge.before.local.hash) {
      // The merge is the file as it is (the server's edits were all the file's too, or lost to
      // --prefer local): a push, as it says.
      item.action = 'push'
    } else if (merge.settled && merge.remote.hash === merge.before.remote.hash) {
      item.action = 'pull'
    } else {
      // A merge with leaves still in conflict is carried out only to settle the chosen ones.
      item.action = merge.settled || merge.chosen.length > 0 ? 'merge' : 'conflict'
      if (item.action === 'merge') merges.set(item.path, merge)
    }
  }
  return merges
}

async function mergeOne(
  deps: MergeDeps,
  codec: Codec,
  item: PlanItem,
  baseHash: string,
  entry: RemoteEntry,
  choices: MergeChoices,
): Promise<{ merge: PlannedMerge; conflicts: ConflictLeaf[] } | string> {
  let baseText = await deps.bases.read(baseHash)
  if (baseText === undefined && !deps.baseFallback)
    return 'changed on both sides, and the base text is not known to merge them'
  const parsed = await readLocalFile(deps.root, item.path, codec, item.id)
  if (!parsed) return 'the file is gone'
  if (!parsed.ok)
    return `changed on both sides; the local file cannot be merged: ${parsed.problems.join('; ')}`
  const object = await fullObject(deps.client, entry)
  if (!object) return 'the server copy is gone'
  const remoteText = entry.bytes?.text ?? fileBytes(codec.toFile(object)).text
  baseText ??= await deps.baseFallback?.(item, baseHash, codec, [
    JSON.parse(remoteText) as JsonObject,
    parsed.file,
  ])
  if (baseText === undefined) {
    const why = await deps.whyNoBase?.()
    return `changed on both sides, and the base text is not known to merge them${why ? `: ${why}` : ''}`
  }
  const only = choices.leaves?.get(item.path)
  const choose = (leaf: ConflictLeaf): Side | undefined => {
    if (!only) return choices.prefer
    return only.some((pointer) => within(leaf.path, pointer)) ? choices.prefer : undefined
  }
  const result = mergeItem(
    codec,
    JSON.parse(baseText) as JsonObject,
    JSON.parse(parsed.text) as JsonObject,
    JSON.parse(remoteText) as JsonObject,
    choose,
  )
  const sides: SideText[] = []
  for (const doc of [result.local, result.remote]) {
    // The result is checked like any file before it is written anywhere (types, id).
    const checked = codec.validate(doc, item.id)
    if (!checked.ok) return `the merge of both sides is not a valid file: ${checked.problems.join('; ')}`
    sides.push(sideText(checked.file))
  }
  return {
    conflicts: result.conflicts,
    merge: {
      local: sides[0]!,
      remote: sides[1]!,
      settled: result.conflicts.length === 0,
      before: {
        local: sideText(parsed.file),
        // The hash of the text itself: entry.hash is of the sorted form for a version-1 base.
        remote: { file: JSON.parse(remoteText) as JsonObject, text: remoteText, hash: hashText(remoteText) },
      },
      chosen: result.settled,
    },
  }
}
