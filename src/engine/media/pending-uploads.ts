// .cms-sync/media-pending.jsonl: the id chosen for each new media file, written (and fsynced)
// before its bytes are sent. The server may store the bytes and still answer an error
// (upstream's first upload of a project), or the answer may never come (a dropped connection,
// a kill -9): the next run then finds the file's id here and gives the file that id again, so
// the server item it may already hold is the same item, never a second copy under a new id.
//
// One JSON line per choice, appended (journal-file.ts): cheap enough to do before every upload (one small write
// and one fsync), and a line torn by a power cut is skipped. An entry is dropped once the
// state or media.yaml knows the id (the item was synced), or once its file is gone.

import { JournalFile } from '../../state/journal-file.js'

/** A line as written: a path below media/ and the id chosen for it. */
function choiceOf(object: unknown): { path: string; id: string } | undefined {
  const { path, id } = (object ?? {}) as { path?: unknown; id?: unknown }
  return typeof path === 'string' && typeof id === 'string' ? { path, id } : undefined
}

export class PendingUploads {
  private constructor(
    private readonly file: JournalFile,
    /** Path below media/ -> the id chosen for it, as read at the start of the run. */
    readonly byPath: Map<string, string>,
  ) {}

  static async load(root: string): Promise<PendingUploads> {
    const file = new JournalFile(root, 'media-pending.jsonl')
    const byPath = new Map<string, string>()
    for (const object of await file.read()) {
      const choice = choiceOf(object)
      if (choice) byPath.set(choice.path, choice.id)
    }
    return new PendingUploads(file, byPath)
  }

  /** Records `id` for the new file at `rel` durably; resolves only once it is on disk. */
  record(rel: string, id: string): Promise<void> {
    return this.file.append([{ path: rel, id }])
  }

  /**
   * Rewrites the file with only the entries still open; `settled` says which are not (their id
   * is known to the state or media.yaml, or their file is gone). Lines appended by this run
   * are kept: they are settled only when a later run sees them synced.
   */
  async prune(settled: (rel: string, id: string) => boolean): Promise<void> {
    if (![...this.byPath].some(([rel, id]) => settled(rel, id))) return
    await this.file.rewrite((lines) =>
      lines.filter((line) => {
        const choice = choiceOf(line)
        return (
          choice !== undefined &&
          !(this.byPath.get(choice.path) === choice.id && settled(choice.path, choice.id))
        )
      }),
    )
  }
}
