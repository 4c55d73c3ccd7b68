// .cms-sync/pushes.jsonl: the hash of every file a run is about to send to the server, written
// (and fsynced) before the first byte goes. The state records a push only after the server
// confirmed it, and is saved in batches (watch waits for a quiet spell): a kill -9 in between
// left the server holding the pushed version while the state still held the older base, and
// the next edit of the same field became a conflict with the user's own push (issue 14 item
// 10). With this journal the next run sees that the server holds exactly what this workspace
// sent, and takes that as the base, as a clean stop would have saved it.
//
// One JSON line per item, appended once per run before its pushes (one write and one fsync).
// A line torn by a power cut is skipped. An entry goes once a saved state holds its hash as
// the base, or once a plan found the server holding something else (the push never landed,
// or the server moved on: then the older base is all that is known).

import { mkdir, open, readFile, rm } from 'node:fs/promises'
import writeFileAtomic from 'write-file-atomic'
import { syncDirPath } from '../workspace/layout.js'
import type { ItemState } from './state-file.js'

const FILE = 'pushes.jsonl'

export interface PushIntent {
  path: string
  /** The canonical hash of the file form the server will hold once the push lands. */
  hash: string
}

type Entry = PushIntent & { settled?: true }

export class PushJournal {
  private appending: Promise<void> = Promise.resolve()

  private constructor(
    private readonly root: string,
    private entries: Entry[],
  ) {}

  static async load(root: string): Promise<PushJournal> {
    let text = ''
    try {
      text = await readFile(syncDirPath(root, FILE), 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    const entries: Entry[] = []
    for (const line of text.split('\n')) {
      try {
        const entry = JSON.parse(line) as { path?: unknown; hash?: unknown }
        if (typeof entry.path === 'string' && typeof entry.hash === 'string')
          entries.push({ path: entry.path, hash: entry.hash })
      } catch {
        // An empty or torn line: its push never started.
      }
    }
    return new PushJournal(root, entries)
  }

  /** The open entries: what earlier runs sent that no saved state holds yet. */
  open(): readonly PushIntent[] {
    return this.entries.filter((entry) => !entry.settled)
  }

  /** Records what is about to be pushed, durably; resolves only once it is on disk. */
  record(intents: readonly PushIntent[]): Promise<void> {
    if (intents.length === 0) return Promise.resolve()
    this.entries.push(...intents.map(({ path, hash }) => ({ path, hash })))
    const text = intents.map(({ path, hash }) => `${JSON.stringify({ path, hash })}\n`).join('')
    const done = this.appending.then(async () => {
      await mkdir(syncDirPath(this.root), { recursive: true })
      const handle = await open(syncDirPath(this.root, FILE), 'a')
      try {
        await handle.write(text)
        await handle.sync()
      } finally {
        await handle.close()
      }
    })
    this.appending = done.catch(() => {})
    return done
  }

  /** A plan has looked at the entry (taken it as the base, or found the server elsewhere). */
  settle(entry: PushIntent): void {
    for (const e of this.entries) if (e.path === entry.path && e.hash === entry.hash) e.settled = true
  }

  /**
   * The entries a state holding `items` makes needless: settled ones, and those whose hash is
   * the base there. Taken when a save takes its text; drop() them once that save is on disk.
   */
  needlessWith(items: Record<string, ItemState>): Entry[] {
    return this.entries.filter((entry) => entry.settled || items[entry.path]?.baseHash === entry.hash)
  }

  async drop(needless: readonly Entry[]): Promise<void> {
    if (needless.length === 0) return
    await this.appending
    const gone = new Set(needless)
    this.entries = this.entries.filter((entry) => !gone.has(entry))
    const file = syncDirPath(this.root, FILE)
    if (this.entries.length === 0) await rm(file, { force: true })
    else
      await writeFileAtomic(
        file,
        this.entries.map(({ path, hash }) => `${JSON.stringify({ path, hash })}\n`).join(''),
      )
  }
}
