// .cms-sync/recent-pushes.json: what this workspace recently pushed, per item the leaves it
// changed with their values before and after, and what of that the server has since put back.
// The CMS's own editor saves the whole item it loaded, with no precondition: an editor who opened
// an item before a developer's push and saves after it reverts the developer's fields, and the
// mirror pulls that like any edit. Only this record lets a run tell such a revert from an edit
// (engine/own-pushes.ts). Bounded: the newest MAX_ITEMS items, none older than MAX_AGE_DAYS; a
// lost or unreadable file only means no revert is told until the next push.

import { mkdir, readFile } from 'node:fs/promises'
import { writeFileAtomically } from '../util/atomic-write.js'
import type { Kind } from '../workspace/kinds.js'
import { syncDirPath } from '../workspace/layout.js'
import { tempDirOf } from '../workspace/temp-files.js'

export const MAX_ITEMS = 500
export const MAX_AGE_DAYS = 14

/** One leaf (a JSON Pointer into the file form) our push changed. */
export interface PushedLeaf {
  pointer: string
  /** Absent when the push added the leaf. */
  before?: unknown
  /** Absent when the push removed the leaf. */
  after?: unknown
}

/** A leaf the server put back to its value before our push. */
export interface RevertedLeaf {
  pointer: string
  /** What we had pushed (absent: we had removed it). */
  ours?: unknown
  /** What the server holds now (absent: removed there). */
  server?: unknown
}

export interface RecentPush {
  kind: Kind
  id: string
  /** When the server confirmed the push (ISO time). */
  at: string
  leaves: PushedLeaf[]
  /** Set once a pull found the server holding a leaf's value from before the push. */
  reverted?: {
    at: string
    leaves: RevertedLeaf[]
    /** Where the file as pushed was kept (workspace-relative, in .cms-sync/trash/). */
    trash?: string
  }
}

interface RecentPushesFile {
  version: 1
  items: Record<string, RecentPush>
}

export function recentPushesPath(root: string): string {
  return syncDirPath(root, 'recent-pushes.json')
}

export class RecentPushes {
  private dirty = false

  private constructor(
    private readonly root: string,
    private readonly items: Map<string, RecentPush>,
  ) {}

  static async load(root: string): Promise<RecentPushes> {
    const items = new Map<string, RecentPush>()
    try {
      const file = JSON.parse(await readFile(recentPushesPath(root), 'utf8')) as RecentPushesFile
      if (file?.version === 1 && typeof file.items === 'object' && file.items !== null)
        for (const [path, item] of Object.entries(file.items))
          if (item && Array.isArray(item.leaves) && typeof item.at === 'string') items.set(path, item)
    } catch {
      // Absent or unreadable: nothing recent is known, which only means no revert is told.
    }
    return new RecentPushes(root, items)
  }

  get(path: string): RecentPush | undefined {
    return this.items.get(path)
  }

  /** Every item whose push the server reverted (not yet sent again or settled), by path. */
  reverted(): [string, RecentPush & { reverted: NonNullable<RecentPush['reverted']> }][] {
    return [...this.items].filter(
      (entry): entry is [string, RecentPush & { reverted: NonNullable<RecentPush['reverted']> }] =>
        entry[1].reverted !== undefined,
    )
  }

  /** Our push of `path` landed: it replaces what was known of earlier pushes of the item. */
  pushed(path: string, push: Omit<RecentPush, 'reverted'>): void {
    if (push.leaves.length === 0) return
    this.items.delete(path)
    this.items.set(path, push)
    this.dirty = true
  }

  /** A pull found the server holding values from before our push. */
  markReverted(path: string, reverted: NonNullable<RecentPush['reverted']>): void {
    const item = this.items.get(path)
    if (!item) return
    item.reverted = reverted
    this.dirty = true
  }

  /** The item moved on (deleted, or its revert was settled): nothing of it is recent any more. */
  forget(path: string): void {
    if (this.items.delete(path)) this.dirty = true
  }

  async save(now: Date = new Date()): Promise<void> {
    const oldest = now.getTime() - MAX_AGE_DAYS * 86_400_000
    for (const [path, item] of this.items)
      if (Date.parse(item.at) < oldest) {
        this.items.delete(path)
        this.dirty = true
      }
    const newestFirst = [...this.items].sort((a, b) => (a[1].at < b[1].at ? 1 : -1))
    if (newestFirst.length > MAX_ITEMS) {
      for (const [path] of newestFirst.slice(MAX_ITEMS)) this.items.delete(path)
      this.dirty = true
    }
    if (!this.dirty) return
    const file: RecentPushesFile = { version: 1, items: Object.fromEntries(this.items) }
    await mkdir(tempDirOf(this.root), { recursive: true })
    await writeFileAtomically(recentPushesPath(this.root), `${JSON.stringify(file)}\n`, {
      fsync: false,
      tempDir: tempDirOf(this.root),
    })
    this.dirty = false
  }
}
