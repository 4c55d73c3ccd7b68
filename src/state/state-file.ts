// .cms-sync/state.json: the base of the three-way comparison. Per item it holds the hash of
// the canonical file at the last successful sync, the server's revision marker seen then, and
// a stat cache so an unchanged file is never re-read. It is written atomically and only after
// the server confirmed, so it never claims a write the server did not get.

import { mkdir, readFile } from 'node:fs/promises'
import writeFileAtomic from 'write-file-atomic'
import { CliError } from '../cli/exit-codes.js'
import { canonicalJson } from '../workspace/canonical-json.js'
import type { Kind } from '../workspace/kinds.js'
import { syncDirPath } from '../workspace/layout.js'

export interface Target {
  server: string
  project: string
  environment: string
}

export interface StatSnapshot {
  size: number
  mtimeMs: number
  ino: number
}

export interface ItemState {
  kind: Kind
  id: string
  path: string
  baseHash: string
  /** content: updateDate; other kinds: the hash of the canonical remote. */
  remoteRev: string
  /** The file as it was when baseHash was taken; equal stat means equal content. */
  stat?: StatSnapshot
  /** content only: kept so a write never resets it (upstream sets a missing one to 1970). */
  createDate?: string | null
  /** The server lists the item from the parent project it inherits from (locked there). */
  inherited?: true
}

export interface StateFile {
  version: 1
  target: Target
  items: Record<string, ItemState>
}

export function statePath(root: string): string {
  return syncDirPath(root, 'state.json')
}

/** The state, or undefined in a fresh clone (no .cms-sync/ yet). */
export async function loadState(root: string): Promise<StateFile | undefined> {
  let text: string
  try {
    text = await readFile(statePath(root), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const state = JSON.parse(text) as StateFile
    if (state.version !== 1 || typeof state.items !== 'object' || !state.target)
      throw new Error('unknown layout')
    return state
  } catch (error) {
    throw new CliError(
      `${statePath(root)} is unreadable (${(error as Error).message}); move it away to start over as a fresh clone`,
    )
  }
}

export function emptyState(target: Target): StateFile {
  return { version: 1, target, items: {} }
}

export function sameTarget(a: Target, b: Target): boolean {
  return (
    a.server.replace(/\/+$/, '') === b.server.replace(/\/+$/, '') &&
    a.project === b.project &&
    a.environment === b.environment
  )
}

/**
 * Holds the state in memory and saves it (temp file + rename) in small batches. Only items the
 * server already confirmed are ever committed, so a crash loses at most the record of a few
 * confirmed changes; the next run then finds both sides equal and adopts them (merge-base).
 */
export class StateStore {
  private unsaved = 0
  private lastSaveMs = 0

  constructor(
    readonly root: string,
    readonly state: StateFile,
    private readonly batch = { items: 25, ms: 500 },
  ) {}

  get(path: string): ItemState | undefined {
    return this.state.items[path]
  }

  async commit(item: ItemState): Promise<void> {
    this.state.items[item.path] = item
    await this.changed()
  }

  async forget(path: string): Promise<void> {
    delete this.state.items[path]
    await this.changed()
  }

  private async changed(): Promise<void> {
    this.unsaved++
    if (this.unsaved >= this.batch.items || Date.now() - this.lastSaveMs >= this.batch.ms) await this.save()
  }

  /** Saves what is not saved yet; call at the end of every run, whatever happened. */
  async flush(): Promise<void> {
    if (this.unsaved > 0) await this.save()
  }

  async save(): Promise<void> {
    await mkdir(syncDirPath(this.root), { recursive: true })
    await writeFileAtomic(statePath(this.root), canonicalJson(this.state))
    this.unsaved = 0
    this.lastSaveMs = Date.now()
  }
}
