// .cms-sync/pushes.jsonl: the hash of every file a run is about to send to the server, written
// (and fsynced) before the first byte goes. The state records a push only after the server
// confirmed it, and is saved in batches (watch waits for a quiet spell): a kill -9 in between
// left the server holding the pushed version while the state still held the older base, and
// the next edit of the same field became a conflict with the user's own push. With this journal the next run sees that the server holds exactly what this workspace
// sent, and takes that as the base, as a clean stop would have saved it.
//
// One JSON line per item, appended once per run before its pushes (journal-file.ts: one write
// and one fsync; a line torn by a power cut is skipped). An entry goes once a saved state holds its hash as
// the base, or once a plan found the server holding something else (the push never landed,
// or the server moved on: then the older base is all that is known).

import type { ItemState } from './item-state.js'
import { JournalFile } from './journal-file.js'

export interface PushIntent {
  path: string
  /** The canonical hash of the file form the server will hold once the push lands. */
  hash: string
}

const keyOf = (intent: PushIntent) => `${intent.hash} ${intent.path}`

/** A line as written: a path and a hash, nothing else. */
function intentOf(object: unknown): PushIntent | undefined {
  const { path, hash } = (object ?? {}) as { path?: unknown; hash?: unknown }
  return typeof path === 'string' && typeof hash === 'string' ? { path, hash } : undefined
}

export class PushJournal {
  /** Entries a plan has looked at, by keyOf: needless once a state is saved. */
  private readonly settled = new Set<string>()

  private constructor(
    private readonly file: JournalFile,
    private entries: PushIntent[],
  ) {}

  static async load(root: string): Promise<PushJournal> {
    const file = new JournalFile(root, 'pushes.jsonl')
    const entries = (await file.read()).flatMap((object) => intentOf(object) ?? [])
    return new PushJournal(file, entries)
  }

  /** The open entries: what earlier runs sent that no saved state holds yet. */
  open(): readonly PushIntent[] {
    return this.entries.filter((entry) => !this.settled.has(keyOf(entry)))
  }

  /** Records what is about to be pushed, durably; resolves only once it is on disk. */
  record(intents: readonly PushIntent[]): Promise<void> {
    const added = intents.map(({ path, hash }) => ({ path, hash }))
    this.entries.push(...added)
    return this.file.append(added)
  }

  /** A plan has looked at the entry (taken it as the base, or found the server elsewhere). */
  settle(entry: PushIntent): void {
    this.settled.add(keyOf(entry))
  }

  /**
   * The entries a state with these bases makes needless: settled ones, and those whose hash is
   * the base there. Taken when a save takes its text; drop() them once that save is on disk.
   */
  needlessWith(baseOf: (path: string) => ItemState | undefined): PushIntent[] {
    return this.entries.filter(
      (entry) => this.settled.has(keyOf(entry)) || baseOf(entry.path)?.baseHash === entry.hash,
    )
  }

  async drop(needless: readonly PushIntent[]): Promise<void> {
    if (needless.length === 0) return
    const gone = new Set(needless.map(keyOf))
    this.entries = this.entries.filter((entry) => !gone.has(keyOf(entry)))
    await this.file.rewrite((lines) =>
      lines.filter((line) => {
        const intent = intentOf(line)
        return intent !== undefined && !gone.has(keyOf(intent))
      }),
    )
  }
}
