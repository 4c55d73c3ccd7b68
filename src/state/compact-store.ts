// The state as the watch daemon keeps it in memory for its whole life: each item as the JSON
// text the state file holds for it, not as objects. At 12,200 items the object form is half
// the daemon's live heap (10 MB; per item the item, its stat, three boxed numbers and six
// strings: 140,000 of the heap's 296,000 objects), and every full collection marks all of it:
// in an idle daemon V8 runs one every poll or two, so their cost is what the state weighs.
// As text an item is one string and one small record.
//
// A run that reads many items expands the store (items read stay objects until it compacts
// again), an edit-only run parses its own few; writes stringify the item, and a save joins the
// texts: the file is byte for byte what JSON.stringify(state) of the object form writes.
// One-shot commands keep the object form (StateStore): they read the state once and every
// item several times. An item is never changed in place, only replaced by commit(): a text
// packed before an in-place change would be saved as it was.

import type { Kind } from '../workspace/kinds.js'
import { type ItemState, type ItemSummary, type StateFile, StateStore } from './state-file.js'

interface Packed {
  kind: Kind
  inherited?: true
  /** JSON.stringify(item): the item's text in the file; undefined while only the object exists. */
  text?: string
}

export class CompactStateStore extends StateStore {
  /** In the file's order (a Map keeps insertion order as an object's string keys do). */
  private readonly packed = new Map<string, Packed>()
  /**
   * The object form, while a run works on the items (expand() to compact()): a full run reads
   * each item several times, and packing the loaded state before the first run would delay
   * `ready`. The daemon opens the store expanded and compacts it after the start-up reconcile.
   */
  private objects: Map<string, ItemState> | undefined = new Map()

  constructor(root: string, state: StateFile, batch?: ConstructorParameters<typeof StateStore>[2]) {
    // `state` keeps the target; the items live here.
    super(root, { ...state, items: {} }, batch)
    for (const [path, item] of Object.entries(state.items)) {
      this.packed.set(path, summaryOf(item))
      this.objects?.set(path, item)
    }
  }

  /** Keep items as objects once read, until compact(). */
  expand(): void {
    this.objects ??= new Map()
  }

  /** Back to text only: every item packed, the objects let go. */
  compact(): void {
    for (const [path, packed] of this.packed) this.textOf(path, packed)
    this.objects = undefined
  }

  private textOf(path: string, packed: Packed): string {
    packed.text ??= JSON.stringify(this.objects?.get(path))
    return packed.text
  }

  override get(path: string): ItemState | undefined {
    const packed = this.packed.get(path)
    if (!packed) return undefined
    const held = this.objects?.get(path)
    if (held) return held
    const item = JSON.parse(packed.text!) as ItemState
    this.objects?.set(path, item)
    return item
  }

  override items(kind?: Kind): ItemState[] {
    const items: ItemState[] = []
    for (const [path, packed] of this.packed)
      if (kind === undefined || packed.kind === kind) items.push(this.get(path)!)
    return items
  }

  override *summaries(): Iterable<ItemSummary> {
    for (const [path, packed] of this.packed)
      yield { path, kind: packed.kind, ...(packed.inherited ? { inherited: true as const } : {}) }
  }

  override get size(): number {
    return this.packed.size
  }

  override async commit(item: ItemState): Promise<void> {
    this.packed.set(item.path, { ...summaryOf(item), text: JSON.stringify(item) })
    this.objects?.set(item.path, item)
    await this.changed()
  }

  override async forget(path: string): Promise<void> {
    this.packed.delete(path)
    this.objects?.delete(path)
    await this.changed()
  }

  /** Each item parsed for the lock and let go at once: a save must not expand the whole store. */
  protected override *lockItems(): Iterable<ItemState> {
    for (const [path, packed] of this.packed) {
      const alternate = this.alternates.get(path)
      if (alternate === null) continue
      yield alternate ?? this.objects?.get(path) ?? (JSON.parse(this.textOf(path, packed)) as ItemState)
    }
  }

  /** What JSON.stringify writes for the object form, with each item's text as it is. */
  protected override serialise(): string {
    const fields: string[] = []
    for (const [key, value] of Object.entries(this.state)) {
      if (key === 'items') fields.push(`"items":${this.itemsText()}`)
      else if (value !== undefined) fields.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`)
    }
    return `{${fields.join(',')}}`
  }

  private itemsText(): string {
    const entries: string[] = []
    for (const [path, packed] of this.packed)
      entries.push(`${JSON.stringify(path)}:${this.textOf(path, packed)}`)
    return `{${entries.join(',')}}`
  }
}

function summaryOf(item: ItemState): Packed {
  return { kind: item.kind, ...(item.inherited ? { inherited: true as const } : {}) }
}
