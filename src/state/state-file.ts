// .cms-sync/state.json: the base of the three-way comparison. Per item it holds the hash of
// the canonical file at the last successful sync, the server's revision marker seen then, and
// a stat cache so an unchanged file is never re-read. It is written atomically and only after
// the server confirmed, so it never claims a write the server did not get.

import { mkdir, readFile } from 'node:fs/promises'
import { CliError } from '../errors/exit-codes.js'
import { naming, writeFileAtomically } from '../util/atomic-write.js'
import { Durability } from '../workspace/durability.js'
import { isBytes, type Kind } from '../workspace/kinds.js'
import { SYNC_DIR, syncDirPath } from '../workspace/layout.js'
import { refuseLinks } from '../workspace/no-follow.js'
import { tempDirOf } from '../workspace/temp-files.js'
import { byPath, lineOf, lockTextOfLines, writeLock } from './committed-base.js'
import type { ItemState, Target } from './item-state.js'
import type { PushJournal } from './push-journal.js'

// The item's shape has its own module (the lock and the push journal hold it too); the state's
// readers keep asking this one.
export type { ItemState, MediaBase, StatSnapshot, Target } from './item-state.js'

/**
 * The createDate to record for a content item the server now holds as `object` (a write never
 * resets it: ItemState.createDate); kinds without one record none, unless the state knew one.
 */
export function createDateOf(
  object: Record<string, unknown>,
  known: ItemState | undefined,
): Pick<ItemState, 'createDate'> {
  if ('createDate' in object)
    return { createDate: typeof object.createDate === 'string' ? object.createDate : null }
  return known && 'createDate' in known ? { createDate: known.createDate ?? null } : {}
}

export interface StateFile {
  version: 2
  target: Target
  items: Record<string, ItemState>
  /**
   * Per listing (a kind's folder name, or `media`): the validator of the listing the bases equal
   * item for item (design.md "Listings are read conditionally"). A 304 to it means the server side
   * of that listing is the bases.
   */
  validators?: Record<string, ListingValidator>
}

/** A listing's validator: its ETag, with the URL it belongs to (another server's never counts). */
export interface ListingValidator {
  url: string
  etag: string
  /** Content: the ids whose listed copy names a schedule (Codec.schedules), said without a body. */
  dated?: string[]
}

export function statePath(root: string): string {
  return syncDirPath(root, 'state.json')
}

/** The state, or undefined in a fresh clone (no .cms-sync/ yet). */
export async function loadState(root: string): Promise<StateFile | undefined> {
  let bytes: Buffer
  try {
    bytes = await readFile(statePath(root))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const state = JSON.parse(bytes.toString('utf8')) as StateFile | OldStateFile
    if (![1, 2].includes(state.version) || typeof state.items !== 'object' || !state.target)
      throw new Error('unknown layout')
    if (state.version === 1) return upgraded(state)
    return state
  } catch (error) {
    throw new CliError(
      `${statePath(root)} is unreadable (${(error as Error).message}); move it away to start over as a fresh clone`,
    )
  }
}

/** A state written before files kept the server's key order. */
interface OldStateFile {
  version: 1
  target: Target
  items: Record<string, ItemState>
}

/** Version 1 -> 2: every base is marked as taken in the sorted-keys form (ItemState.sortedBase). */
function upgraded(old: OldStateFile): StateFile {
  const items: Record<string, ItemState> = {}
  for (const [path, item] of Object.entries(old.items))
    items[path] = item.kind === 'media' ? item : { ...item, sortedBase: true }
  return { version: 2, target: old.target, items }
}

export function emptyState(target: Target): StateFile {
  return { version: 2, target, items: {} }
}

/** One server however its address ends: `https://cms.example/` is `https://cms.example`. */
export function sameServer(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '')
}

export function sameTarget(a: Target, b: Target): boolean {
  return sameServer(a.server, b.server) && a.project === b.project && a.environment === b.environment
}

/**
 * Holds the state in memory and saves it (temp file + rename) in small batches. Only items the
 * server already confirmed are ever committed, so a crash loses at most the record of a few
 * confirmed changes; the next run then finds both sides equal and adopts them (merge-base).
 * A save rewrites the whole file, so saves are also spaced by ten times what the last one
 * took: on a large workspace they stay under a tenth of the run instead of growing with it.
 */
export class StateStore {
  private unsaved = 0
  private lastSaveMs = 0
  private lastSaveCostMs = 0
  private saving: Promise<void> | undefined
  /**
   * What the runs against this state wrote to the workspace (their LocalWriters note it here).
   * Flushed before every save, after the text is taken, so the state never claims a file the
   * disk might lose. One per store: watch keeps its store from run to run, so a save flushes
   * what every earlier run wrote too.
   */
  readonly durability: Durability
  /**
   * Items whose base in cms-sync.lock differs from the state's (null: the lock has no base for
   * it). The planner plans against both (plan.ts, `alt`); until the item is synced again the lock
   * keeps its own line, so an open disagreement is never settled by the rewrite of the lock.
   */
  readonly alternates = new Map<string, ItemState | null>()
  private lockOnDisk: string | undefined
  /**
   * The lock's lines in path order, each with the item it was made of: a save makes the lines
   * of the items that changed only. Making and sorting all of them cost a save at 100,000 items
   * more than the state's own JSON. Dropped when a path comes or goes.
   */
  private lockLines: { path: string; item: ItemState | undefined; line: string }[] | undefined
  /** What runs are about to push (push-journal.ts); set by whoever opens the state for a run. */
  pushes: PushJournal | undefined
  /**
   * The items by kind, and the inherited ones, kept as items come and go: what the guards count
   * (guards.ts BaseCounts) and the schemas an edit-only run checks references against. Taken
   * from all 100,000 items on every run, they cost a one-file edit under watch more than the
   * edit itself.
   */
  private readonly byKind = new Map<Kind, Map<string, ItemState>>()
  private readonly inheritedPaths = new Set<string>()
  private count = 0
  private readonly drops = new Map<string, number>()

  constructor(
    readonly root: string,
    readonly state: StateFile,
    // Each save writes (and fsyncs) the whole state: at most about once a second, or every 250
    // items, keeps a 2,000-file media pull from spending its time saving; a crash loses at
    // most that many records, which the next run adopts again by comparing both sides.
    private readonly batch = { items: 250, ms: 1000 },
  ) {
    this.durability = new Durability(root)
    for (const [path, item] of Object.entries(state.items)) this.counted(path, item)
    this.count = Object.keys(state.items).length
  }

  private counted(path: string, item: ItemState): void {
    const ofKind = this.byKind.get(item.kind) ?? new Map<string, ItemState>()
    if (ofKind.size === 0) this.byKind.set(item.kind, ofKind)
    ofKind.set(path, item)
    if (item.inherited) this.inheritedPaths.add(path)
    else this.inheritedPaths.delete(path)
  }

  /** Puts `item` in the place of what its path held (nothing: undefined), in the items and the indexes. */
  private replace(path: string, item: ItemState | undefined): void {
    const known = this.state.items[path]
    // The same kind keeps its place in its index, as the path keeps its place among the items.
    if (known && known.kind !== item?.kind) {
      this.byKind.get(known.kind)?.delete(path)
      this.inheritedPaths.delete(path)
    }
    if (item) {
      this.state.items[path] = item
      this.counted(path, item)
    } else delete this.state.items[path]
    if (!known !== !item) this.lockLines = undefined
    this.count += (item ? 1 : 0) - (known ? 1 : 0)
    this.alternates.delete(path)
  }

  get(path: string): ItemState | undefined {
    return this.state.items[path]
  }

  /** The validator of the listing `name`'s bases equal, if one is recorded. */
  validatorOf(name: string): ListingValidator | undefined {
    const validator = this.state.validators?.[name]
    return validator && typeof validator.url === 'string' && typeof validator.etag === 'string'
      ? validator
      : undefined
  }

  /** How many times `name`'s validator was dropped: a listing read before a drop is not recorded. */
  dropsOf(name: string): number {
    return this.drops.get(name) ?? 0
  }

  /** Records that the bases of `name` equal the listing `validator` names; saved with the next save. */
  setValidator(name: string, validator: ListingValidator): void {
    const known = this.state.validators?.[name]
    if (
      known?.url === validator.url &&
      known.etag === validator.etag &&
      sameIds(known.dated, validator.dated)
    )
      return
    this.state.validators = { ...this.state.validators, [name]: validator }
    this.unsaved++
  }

  /**
   * Before the tool's own write to `name`: a server or proxy whose ETag does not follow the
   * listing would answer 304 to the old validator for ever, and the write would look undone.
   */
  dropValidator(name: string): void {
    this.drops.set(name, this.dropsOf(name) + 1)
    if (!this.state.validators?.[name]) return
    const { [name]: _dropped, ...rest } = this.state.validators
    this.state.validators = rest
    this.unsaved++
  }

  /**
   * The base whose server revision marker is `rev`: the state's, or the lock's where the two
   * disagree; else the state's. A remote item at a revision either base saw is unchanged since it.
   */
  baseAt(path: string, rev: string): ItemState | undefined {
    const known = this.get(path)
    if (known?.remoteRev === rev) return known
    const alternate = this.alternates.get(path)
    return alternate?.remoteRev === rev ? alternate : known
  }

  /** Every item (of one kind, if given). */
  items(kind?: Kind): ItemState[] {
    if (kind === undefined) return Object.values(this.state.items)
    return [...(this.byKind.get(kind)?.values() ?? [])]
  }

  /** How many items of a kind the state holds (guards.ts BaseCounts). */
  countOf(kind: Kind): number {
    return this.byKind.get(kind)?.size ?? 0
  }

  /** How many items the server listed as inherited from its parent project. */
  get inheritedCount(): number {
    return this.inheritedPaths.size
  }

  isInherited(path: string): boolean {
    return this.inheritedPaths.has(path)
  }

  get size(): number {
    return this.count
  }

  async commit(item: ItemState): Promise<void> {
    this.replace(item.path, item)
    await this.changed()
  }

  /**
   * A base the plan learned (a landed push, landed-pushes.ts): in memory at once, on disk with
   * the next save of a run that writes. Never saved here: `status` plans too, without the lock.
   */
  adopt(item: ItemState): void {
    this.replace(item.path, item)
    this.unsaved++
  }

  /**
   * The server's bytes of a media item were read and are its base: when, for status. In memory at
   * once, on disk with the next save (the daemon's verifier, a --checksum run); never saved here.
   */
  verified(path: string, at: string): void {
    const item = this.get(path)
    if (!item || !isBytes(item.kind)) return
    this.replace(path, { ...item, verifiedAt: at })
    this.unsaved++
  }

  async forget(path: string): Promise<void> {
    this.replace(path, undefined)
    await this.changed()
  }

  /**
   * The item the lock records for a path: the state's, but the lock's own line while the two
   * disagree (null: the lock has no line for it).
   */
  private lockItemAt(path: string): ItemState | null | undefined {
    const alternate = this.alternates.get(path)
    return alternate === undefined ? this.state.items[path] : alternate
  }

  /** cms-sync.lock as the state stands: written with every save of the state. */
  lockText(): string {
    this.lockLines ??= Object.keys(this.state.items)
      .sort(byPath)
      .map((path) => ({ path, item: undefined, line: '' }))
    const lines: string[] = []
    for (const entry of this.lockLines) {
      const item = this.lockItemAt(entry.path)
      if (!item) continue
      // Items are replaced, never changed in place (commit, adopt): the same object, the same line.
      if (entry.item !== item) {
        entry.item = item
        entry.line = lineOf(item)
      }
      lines.push(entry.line)
    }
    return lockTextOfLines(this.state.target, lines)
  }

  private async changed(): Promise<void> {
    this.unsaved++
    // Items committed during a save are left for the next one.
    if (this.saving) return
    const sinceLast = Date.now() - this.lastSaveMs
    const due = this.unsaved >= this.batch.items || sinceLast >= this.batch.ms
    if (due && sinceLast >= 10 * this.lastSaveCostMs) await this.save()
  }

  /** Saves what is not saved yet; call at the end of every run, whatever happened. */
  async flush(): Promise<void> {
    while (this.saving) await this.saving
    if (this.unsaved > 0) await this.save()
  }

  /**
   * Saves run one after another, each serialising the state as it is when it starts, so
   * commits made concurrently (transfers run side by side) are never overwritten by an older
   * snapshot finishing last. A waiter re-checks `saving` synchronously before it starts.
   */
  async save(): Promise<void> {
    while (this.saving) await this.saving
    const started = Date.now()
    // The text and the count it covers are taken together, before any other commit can run.
    // Plain JSON, not the canonical form: this file is ours alone, never diffed, and sorting
    // the keys of 10,000 items on every save cost a pull a second of CPU.
    const text = JSON.stringify(this.state)
    const lock = this.lockText()
    const covered = this.unsaved
    const needless = this.pushes?.needlessWith(this.state.items) ?? []
    this.saving = (async () => {
      await this.durability.flush()
      await mkdir(syncDirPath(this.root), { recursive: true })
      // A write replaces the file a link points at: a .cms-sync (or state.json) made a link
      // while a watch runs (a checkout) must not send the state outside the workspace.
      refuseLinks(this.root, `${SYNC_DIR}/state.json`)
      await writeFileAtomically(statePath(this.root), text, { tempDir: tempDirOf(this.root) }).catch(
        (error) => {
          throw naming(error, statePath(this.root))
        },
      )
      // The lock after the state: a crash between the two leaves the lock one step behind,
      // which the next run sees as a disagreement (a conflict at worst), never as a base it lacks.
      this.lockOnDisk = await writeLock(this.root, lock, this.lockOnDisk)
      // Pushes the saved state now holds need no journal entry.
      await this.pushes?.drop(needless)
    })()
    try {
      await this.saving
    } finally {
      this.saving = undefined
    }
    this.unsaved -= covered
    this.lastSaveMs = Date.now()
    this.lastSaveCostMs = this.lastSaveMs - started
  }
}

function sameIds(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b ?? [])
}
