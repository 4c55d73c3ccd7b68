// .cms-sync/bases/<hash>: the text of every item's base, so an item changed on both sides can
// be merged against it (design.md "Merging"). Content-addressed: the name is the sha256 of the
// canonical text, so a blob is written once, never changed, and checked on every read (a blob
// cut short by a crash is simply not there). Written without fsync or a temp file: the worst a
// crash costs is a merge that becomes a conflict. Only the items
// changed on both sides ever read one, so a no-change run never opens this folder.

import { mkdirSync, writeFileSync } from 'node:fs'
import { readdir, readFile, rm } from 'node:fs/promises'
import { writeFileAtomically } from '../workspace/atomic-write.js'
import { hashText } from '../workspace/codec.js'
import { naming } from '../workspace/disk-full.js'
import { syncDirPath } from '../workspace/layout.js'
import type { StateStore } from './state-file.js'

const HASH = /^[0-9a-f]{64}$/
const TEMP = /^[0-9a-f]{64}\.\d+$/

/** Counts base reads, so tests can see that only items changed on both sides read one. */
export const baseReads = { count: 0 }

export class BaseStore {
  private folderMade = false
  /** Blobs this store wrote: a run that wrote none leaves the folder alone when it ends. */
  written = 0

  constructor(readonly root: string) {}

  private path(hash: string): string {
    return syncDirPath(this.root, 'bases', hash)
  }

  /** Keeps the text of a base (its canonical file text, whose sha256 is `hash`). */
  async keep(hash: string, text: string): Promise<void> {
    if (!HASH.test(hash)) return
    try {
      if (!this.folderMade) {
        mkdirSync(syncDirPath(this.root, 'bases'), { recursive: true })
        this.folderMade = true
      }
      // One exclusive create, no temp file and rename: the name is the hash of the text, so a
      // blob a crash cut short fails its check on read. Synchronous: a blob is an item's file
      // (kilobytes), and three trips through the thread pool cost more than the three calls.
      writeFileSync(this.path(hash), text, { flag: 'wx' })
      this.written++
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw naming(error, this.path(hash))
      // Already kept, unless a crash cut that one short: then it is replaced, atomically.
      if ((await this.read(hash)) === undefined) {
        await writeFileAtomically(this.path(hash), text, { fsync: false })
        this.written++
      }
    }
  }

  /** The base's text, or undefined when it was never kept here (or is damaged). */
  async read(hash: string): Promise<string | undefined> {
    if (!HASH.test(hash)) return undefined
    baseReads.count++
    const text = await readFile(this.path(hash), 'utf8').catch(() => undefined)
    return text !== undefined && hashText(text) === hash ? text : undefined
  }

  /** Removes the blobs no item of the state refers to; returns how many. */
  async prune(store: StateStore): Promise<number> {
    const names = await readdir(syncDirPath(this.root, 'bases')).catch(() => [] as string[])
    if (names.length === 0) return 0
    const referenced = new Set(store.items().map((item) => item.baseHash))
    let removed = 0
    for (const name of names) {
      // A blob nothing refers to (or a temp file an older version left).
      const unused = HASH.test(name) ? !referenced.has(name) : TEMP.test(name)
      if (!unused) continue
      await rm(syncDirPath(this.root, 'bases', name), { force: true })
      removed++
    }
    return removed
  }
}
