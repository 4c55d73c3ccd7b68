// A JSON-lines journal under .cms-sync/: one object per line, appended and fsynced before the
// step it guards (a push, an upload under a chosen id), so a kill -9 right after that step
// still leaves the next run knowing it may have happened. A line torn by a power cut is
// skipped on reading: the step it would have guarded never started. Used by push-journal.ts
// and engine/media/pending-uploads.ts, which say what their lines mean and when they go.

import { mkdir, open, readFile, rm } from 'node:fs/promises'
import { writeFileAtomically } from '../util/atomic-write.js'
import { syncDirPath } from '../workspace/layout.js'
import { tempDirOf } from '../workspace/temp-files.js'

export class JournalFile {
  /** Appends (and rewrites) run one after another, so two writers' lines never interleave. */
  private writing: Promise<void> = Promise.resolve()

  constructor(
    private readonly root: string,
    private readonly name: string,
  ) {}

  private get file(): string {
    return syncDirPath(this.root, this.name)
  }

  /** Every whole line's object, in order; none when the file does not exist. */
  async read(): Promise<unknown[]> {
    let text = ''
    try {
      text = await readFile(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    const objects: unknown[] = []
    for (const line of text.split('\n')) {
      if (line === '') continue
      try {
        objects.push(JSON.parse(line))
      } catch {
        // A torn line: the step it guarded never started.
      }
    }
    return objects
  }

  /** Appends one line per object, durably: resolves only once they are on disk. */
  append(objects: readonly object[]): Promise<void> {
    if (objects.length === 0) return Promise.resolve()
    const text = objects.map((object) => `${JSON.stringify(object)}\n`).join('')
    return this.queue(async () => {
      await mkdir(syncDirPath(this.root), { recursive: true })
      const handle = await open(this.file, 'a')
      try {
        await handle.write(text)
        await handle.sync()
      } finally {
        await handle.close()
      }
    })
  }

  /**
   * Replaces the journal with the objects `keep` returns from its current lines (read after
   * every append in flight is on disk); no file when none are left.
   */
  rewrite(keep: (objects: unknown[]) => readonly unknown[]): Promise<void> {
    return this.queue(async () => {
      const before = await this.read()
      const kept = keep(before)
      if (kept.length === before.length) return
      if (kept.length === 0) await rm(this.file, { force: true })
      else
        await writeFileAtomically(this.file, kept.map((object) => `${JSON.stringify(object)}\n`).join(''), {
          tempDir: tempDirOf(this.root),
        })
    })
  }

  private queue(step: () => Promise<void>): Promise<void> {
    const done = this.writing.then(step)
    this.writing = done.catch(() => {})
    return done
  }
}
