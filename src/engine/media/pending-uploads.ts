// .cms-sync/media-pending.jsonl: the id chosen for each new media file, written (and fsynced)
// before its bytes are sent. The server may store the bytes and still answer an error
// (upstream's first upload of a project), or the answer may never come (a dropped connection,
// a kill -9): the next run then finds the file's id here and gives the file that id again, so
// the server item it may already hold is the same item, never a second copy under a new id.
//
// One JSON line per choice, appended: cheap enough to do before every upload (one small write
// and one fsync), and a line torn by a power cut is skipped. An entry is dropped once the
// state or media.yaml knows the id (the item was synced), or once its file is gone.

import { mkdir, open, readFile, rm } from 'node:fs/promises'
import writeFileAtomic from 'write-file-atomic'
import { syncDirPath } from '../../workspace/layout.js'

const FILE = 'media-pending.jsonl'

export class PendingUploads {
  /** Appends run one after another, so two uploads' lines never interleave. */
  private appending: Promise<void> = Promise.resolve()

  private constructor(
    private readonly root: string,
    /** Path below media/ -> the id chosen for it, as read at the start of the run. */
    readonly byPath: Map<string, string>,
  ) {}

  static async load(root: string): Promise<PendingUploads> {
    const byPath = new Map<string, string>()
    let text = ''
    try {
      text = await readFile(syncDirPath(root, FILE), 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    for (const line of text.split('\n')) {
      try {
        const entry = JSON.parse(line) as { path?: unknown; id?: unknown }
        if (typeof entry.path === 'string' && typeof entry.id === 'string') byPath.set(entry.path, entry.id)
      } catch {
        // An empty or torn line: nothing was sent under an id whose line is not complete.
      }
    }
    return new PendingUploads(root, byPath)
  }

  /** Records `id` for the new file at `rel` durably; resolves only once it is on disk. */
  record(rel: string, id: string): Promise<void> {
    const line = `${JSON.stringify({ path: rel, id })}\n`
    const done = this.appending.then(async () => {
      await mkdir(syncDirPath(this.root), { recursive: true })
      const handle = await open(syncDirPath(this.root, FILE), 'a')
      try {
        await handle.write(line)
        await handle.sync()
      } finally {
        await handle.close()
      }
    })
    this.appending = done.catch(() => {})
    return done
  }

  /**
   * Rewrites the file with only the entries still open; `settled` says which are not (their id
   * is known to the state or media.yaml, or their file is gone). Lines appended by this run
   * are kept: they are settled only when a later run sees them synced.
   */
  async prune(settled: (rel: string, id: string) => boolean): Promise<void> {
    await this.appending
    const keep = [...this.byPath].filter(([rel, id]) => !settled(rel, id))
    if (keep.length === this.byPath.size) return
    const file = syncDirPath(this.root, FILE)
    let text = ''
    try {
      text = await readFile(file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    const lines = text.split('\n').filter((line) => {
      try {
        const entry = JSON.parse(line) as { path?: unknown; id?: unknown }
        return !(
          typeof entry.path === 'string' &&
          typeof entry.id === 'string' &&
          this.byPath.get(entry.path) === entry.id &&
          settled(entry.path, entry.id)
        )
      } catch {
        return false
      }
    })
    if (lines.length === 0) await rm(file, { force: true })
    else await writeFileAtomic(file, `${lines.join('\n')}\n`)
  }
}
