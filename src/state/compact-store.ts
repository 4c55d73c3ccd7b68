// The state as the watch daemon keeps it in memory for its whole life: each item as the JSON
// text the state file holds for it, not as objects. At 12,200 items the object form is half
// the daemon's live heap (10 MB; per item the item, its stat, three boxed numbers and six
// strings: 140,000 of the heap's 296,000 objects), and every full collection marks all of it:
// in an idle daemon V8 runs one every poll or two, so their cost is what the state weighs.
// As text an item is one string and one small record.
//
// Reads parse the item (a few microseconds; a full run reads each item a few times, an edit
// only its own), writes stringify it, and a save joins the texts: the file is byte for byte
// what JSON.stringify(state) of the object form writes. One-shot commands keep the object
// form (StateStore): they read the state once and every item several times.

import type { Kind } from '../workspace/kinds.js'
import { type ItemState, type ItemSummary, type StateFile, StateStore } from './state-file.js'

interface Packed {
  kind: Kind
  inherited?: true
  /** JSON.stringify(item): the item's text in the file. */
  text: string
}

export class CompactStateStore extends StateStore {
  /** In the file's order (a Map keeps insertion order as an object's string keys do). */
  private readonly packed = new Map<string, Packed>()

  constructor(root: string, state: StateFile, batch?: ConstructorParameters<typeof StateStore>[2]) {
    // The object form is dropped as it is packed: `state` keeps the target, no items.
    super(root, { ...state, items: {} }, batch)
    for (const [path, item] of Object.entries(state.items)) this.pack(path, item)
  }

  private pack(path: string, item: ItemState): void {
    this.packed.set(path, {
      kind: item.kind,
      ...(item.inherited ? { inherited: true as const } : {}),
      text: JSON.stringify(item),
    })
  }

  override get(path: string): ItemState | undefined {
    const packed = this.packed.get(path)
    return packed && (JSON.parse(packed.text) as ItemState)
  }

  override items(kind?: Kind): ItemState[] {
    const items: ItemState[] = []
    for (const packed of this.packed.values())
      if (kind === undefined || packed.kind === kind) items.push(JSON.parse(packed.text) as ItemState)
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
    this.pack(item.path, item)
    await this.changed()
  }

  override async forget(path: string): Promise<void> {
    this.packed.delete(path)
    await this.changed()
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
    for (const [path, packed] of this.packed) entries.push(`${JSON.stringify(path)}:${packed.text}`)
    return `{${entries.join(',')}}`
  }
}
