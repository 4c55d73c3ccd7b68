// The three-way merge of one item's JSON (design.md "Merging"): pure, no fs, no clock. Every
// change either side made since the base lands in the result unless the other side changed the
// same leaf to something else; such a leaf is a conflict, named with its base, local and remote
// values, and the rest still merges.
//
// Leaves, not lines:
//  - objects merge key by key, recursively; a multilingual value (`_multilingual: true`) merges
//    language by language, each language one leaf;
//  - arrays are one value, unless every item carries an `id`: then items merge by id, like keys;
//  - a path the caller names atomic (a schema's field definition) is one leaf;
//  - key order is part of the file (design.md: the server's order is what editors see), so a
//    reorder is a change: a reorder on one side and edits on the other both survive; two
//    different reorders of the same keys are a conflict on the order.
// The merge is symmetric: swapping local and remote swaps the two sides of every conflict and
// gives the same merged document (ties in placing keys both sides added are broken by the keys).

import { pointerOf } from './pointer.js'

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonRecord = { [key: string]: Json }
/** A value, or undefined where that side lacks it (deleted, or never had it). */
type Value = Json | undefined

/** A side of an item: the workspace's file or the server's copy. */
export type Side = 'local' | 'remote'

export interface ConflictLeaf {
  /** A JSON Pointer; in an array whose items carry ids, the segment is the item's id. */
  path: string
  /** Each side's value; a side that lacks the leaf has none. For `order`: the keys (or ids) in order. */
  base?: Json
  local?: Json
  remote?: Json
  /** The conflict is the order of an object's keys or of an id array's items, not a value. */
  order?: true
}

export interface MergeOptions {
  /** A path whose value is one leaf, never merged inside (segments as in ConflictLeaf.path). */
  atomic?: (segments: readonly string[]) => boolean
  /** Settles a conflicting leaf for one side (--prefer, resolve --keep); undefined leaves it. */
  choose?: (leaf: ConflictLeaf) => Side | undefined
}

export interface MergeResult {
  /** Conflicting leaves nothing settled: none means `local` and `remote` are the one merged document. */
  conflicts: ConflictLeaf[]
  /** Conflicting leaves `choose` settled, with the side kept. */
  settled: Array<ConflictLeaf & { kept: Side }>
  /** The local document after the merge: every change merged, unsettled conflicts at the local value. */
  local: Json
  /** The same for the remote document: unsettled conflicts at the remote value. */
  remote: Json
}

/** The merged document, when nothing is left in conflict. */
export function mergedOf(result: MergeResult): Json | undefined {
  return result.conflicts.length === 0 ? result.local : undefined
}

export function mergeJson(base: Json, local: Json, remote: Json, opts: MergeOptions = {}): MergeResult {
  const merger = new Merger(opts)
  const pair = merger.value([], base, local, remote, false)
  // By path: the same list whichever side is local, and the order people read them in.
  const byPath = (a: ConflictLeaf, b: ConflictLeaf) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  return {
    conflicts: merger.conflicts.sort(byPath),
    settled: merger.settled.sort(byPath),
    local: pair.l as Json,
    remote: pair.r as Json,
  }
}

interface Pair {
  l: Value
  r: Value
}

function isRecord(value: Value): value is JsonRecord {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function same(a: Value, b: Value): boolean {
  if (a === b) return true
  if (a === undefined || b === undefined) return false
  return JSON.stringify(a) === JSON.stringify(b)
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}

/** The id of an array item that carries one, as a path segment. */
function idOf(item: Json): string | undefined {
  if (!isRecord(item)) return undefined
  const id = item.id
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined
}

/** Arrays whose every item carries an id, unique within its array. */
function carriesIds(value: Value): value is Json[] {
  if (!Array.isArray(value)) return false
  const ids = value.map(idOf)
  return ids.every((id) => id !== undefined) && new Set(ids).size === ids.length
}

class Merger {
  readonly conflicts: ConflictLeaf[] = []
  readonly settled: Array<ConflictLeaf & { kept: Side }> = []

  constructor(private readonly opts: MergeOptions) {}

  /** One value on the three sides; `leaf`: never merged inside (a language of a multilingual value). */
  value(segments: string[], b: Value, l: Value, r: Value, leaf: boolean): Pair {
    if (same(l, r)) return { l, r: l }
    if (same(b, l)) return { l: r, r }
    if (same(b, r)) return { l, r: l }
    if (!leaf && !this.opts.atomic?.(segments)) {
      if (isRecord(l) && isRecord(r)) return this.record(segments, isRecord(b) ? b : {}, l, r)
      if (carriesIds(l) && carriesIds(r) && (b === undefined || carriesIds(b)))
        return this.idArray(segments, b ?? [], l, r)
    }
    return this.conflict({ path: pointerOf(segments), ...sides(b, l, r) }, l, r)
  }

  private conflict(leaf: ConflictLeaf, l: Value, r: Value): Pair {
    const kept = this.opts.choose?.(leaf)
    if (kept === undefined) {
      this.conflicts.push(leaf)
      return { l, r }
    }
    this.settled.push({ ...leaf, kept })
    const value = kept === 'local' ? l : r
    return { l: value, r: value }
  }

  private record(segments: string[], b: JsonRecord, l: JsonRecord, r: JsonRecord): Pair {
    const multilingual = l._multilingual === true || r._multilingual === true
    const keys = [...new Set([...Object.keys(b), ...Object.keys(l), ...Object.keys(r)])]
    const merged = new Map<string, Pair>()
    for (const key of keys) {
      const leaf = multilingual && key !== '_multilingual'
      merged.set(key, this.value([...segments, key], b[key], l[key], r[key], leaf))
    }
    const order = this.order(segments, Object.keys(b), Object.keys(l), Object.keys(r), merged)
    const build = (keysInOrder: string[], side: 'l' | 'r') => {
      const out: JsonRecord = {}
      for (const key of keysInOrder) {
        const value = merged.get(key)![side]
        if (value !== undefined) out[key] = value
      }
      return out
    }
    return { l: build(order.l, 'l'), r: build(order.r, 'r') }
  }

  private idArray(segments: string[], b: Json[], l: Json[], r: Json[]): Pair {
    const byId = (items: Json[]) => new Map(items.map((item) => [idOf(item)!, item]))
    const [bm, lm, rm] = [byId(b), byId(l), byId(r)]
    const ids = [...new Set([...bm.keys(), ...lm.keys(), ...rm.keys()])]
    const merged = new Map<string, Pair>()
    for (const id of ids)
      merged.set(id, this.value([...segments, id], bm.get(id), lm.get(id), rm.get(id), false))
    const order = this.order(segments, [...bm.keys()], [...lm.keys()], [...rm.keys()], merged)
    const build = (inOrder: string[], side: 'l' | 'r') =>
      inOrder.map((id) => merged.get(id)![side]).filter((item): item is Json => item !== undefined)
    return { l: build(order.l, 'l'), r: build(order.r, 'r') }
  }

  /**
   * The order of the merged keys (or ids). The keys all three sides still hold keep the order of
   * the side that reordered them (both reordered alike: that order; differently: a conflict).
   * Every other key (added, or kept by a delete/edit conflict) follows the key it follows on its
   * own side; keys both sides placed at the same spot go run by run, the smaller run first.
   */
  private order(
    segments: string[],
    B: string[],
    L: string[],
    R: string[],
    merged: ReadonlyMap<string, Pair>,
  ): { l: string[]; r: string[] } {
    const inResult = (key: string) => merged.get(key)!.l !== undefined || merged.get(key)!.r !== undefined
    const inL = new Set(L)
    const inR = new Set(R)
    const common = new Set(B.filter((k) => inL.has(k) && inR.has(k) && inResult(k)))
    const [Bc, Lc, Rc] = [B, L, R].map((keys) => keys.filter((k) => common.has(k))) as [
      string[],
      string[],
      string[],
    ]
    let settledL: string[]
    let settledR: string[]
    if (sameList(Lc, Bc)) settledL = settledR = Rc
    else if (sameList(Rc, Bc) || sameList(Lc, Rc)) settledL = settledR = Lc
    else {
      const pair = this.conflict(
        { path: pointerOf(segments), base: B, local: L, remote: R, order: true },
        L,
        R,
      )
      settledL = pair.l === L ? Lc : Rc
      settledR = pair.r === L ? Lc : Rc
    }
    const runsOf = (keys: string[]) => {
      const runs = new Map<string | undefined, string[]>()
      let anchor: string | undefined
      for (const key of keys) {
        if (common.has(key)) anchor = key
        else if (inResult(key)) runs.set(anchor, [...(runs.get(anchor) ?? []), key])
      }
      return runs
    }
    const [runsL, runsR] = [runsOf(L), runsOf(R)]
    const place = (settled: string[]) => {
      const out: string[] = []
      const seen = new Set<string>()
      const emit = (key: string) => {
        if (!seen.has(key)) {
          seen.add(key)
          out.push(key)
        }
      }
      for (const anchor of [undefined, ...settled]) {
        if (anchor !== undefined) emit(anchor)
        const a = runsL.get(anchor) ?? []
        const b = runsR.get(anchor) ?? []
        const [first, second] = JSON.stringify(b) < JSON.stringify(a) ? [b, a] : [a, b]
        for (const key of [...first, ...second]) emit(key)
      }
      return out
    }
    const l = place(settledL)
    return { l, r: settledR === settledL ? l : place(settledR) }
  }
}

function sides(b: Value, l: Value, r: Value): Omit<ConflictLeaf, 'path'> {
  return {
    ...(b === undefined ? {} : { base: b }),
    ...(l === undefined ? {} : { local: l }),
    ...(r === undefined ? {} : { remote: r }),
  }
}
