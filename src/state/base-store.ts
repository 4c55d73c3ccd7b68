// .cms-sync/bases/: the text of every item's base, so an item changed on both sides can be
// merged against it (design.md "Merging"). Checked on every read (the sha256 of the canonical
// text is the base's name), so a base a crash cut short is simply not there. Written without
// fsync or a temp file: the worst a crash costs is a merge that becomes a conflict. Only the
// items changed on both sides ever read one, so a no-change run never opens this folder.
//
// Two forms. A run's first LOOSE_LIMIT bases are blobs named by their hash, one file each (a
// watch edit, a push of a few files). Beyond that they go to one pack file per run,
// `pack-<pid>-<n>-<time>`, records of `base <sha256> <bytes>\n<text>\n` appended in groups:
// a blob each would be a second file per item of a pull, and creating a file is the dearest
// call of a pull (docs/benchmarks.md, "A run's bases in one pack file"). keep() still resolves only once its
// record is written, so the state never records a base that is not on disk; the items in
// flight at the same turn of the event loop share one append.

import { closeSync, constants, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs'
import { open, readdir, readFile, rm } from 'node:fs/promises'
import { naming, writeFileAtomically } from '../util/atomic-write.js'
import { hashText } from '../workspace/codec.js'
import { syncDirPath } from '../workspace/layout.js'
import { NO_FOLLOW } from '../workspace/no-follow.js'
import type { StateStore } from './state-file.js'

const HASH = /^[0-9a-f]{64}$/
const TEMP = /^[0-9a-f]{64}\.\d+$/
const PACK = /^pack-[0-9a-z-]+$/
/** A pack being rewritten by prune when a crash came (writeFileAtomically's sibling temp file). */
const PACK_TEMP = /^pack-[0-9a-z-]+\.\d+$/
/** Bases a run keeps as blobs before the rest go to its pack. */
export const LOOSE_LIMIT = 32

interface PackedBase {
  hash: string
  /** Where the record (its header) starts. */
  at: number
  /** Byte range of the text in the pack. */
  start: number
  end: number
}

/** Longer than any record header (`base <64 hex> <length>\n`). */
const HEADER_MAX = 100

/**
 * The records of a pack, up to the first that is cut short or malformed (a crash's tail). Read
 * header by header, each text skipped by its length: a pack of 100,000 bases is 80 MB, and
 * neither prune nor a merge needs it in memory.
 */
export async function packRecords(file: string): Promise<PackedBase[]> {
  const records: PackedBase[] = []
  const handle = await open(file, constants.O_RDONLY | NO_FOLLOW)
  try {
    const size = (await handle.stat()).size
    // Headers are read through a window of the file, texts skipped by their length.
    const window = Buffer.alloc(64 * 1024)
    let windowAt = 0
    let windowLength = 0
    let at = 0
    while (at < size) {
      const atEnd = windowAt + windowLength >= size
      if (at < windowAt || (at + HEADER_MAX > windowAt + windowLength && !atEnd)) {
        windowAt = at
        windowLength = (await handle.read(window, 0, window.length, at)).bytesRead
      }
      const from = at - windowAt
      const head = window.subarray(from, Math.min(from + HEADER_MAX, windowLength))
      const eol = head.indexOf(10)
      if (eol < 0) break
      const header = /^base ([0-9a-f]{64}) (\d+)$/.exec(head.toString('latin1', 0, eol))
      if (!header) break
      const start = at + eol + 1
      const end = start + Number(header[2])
      // A text cut short ends the walk; one damaged in place fails its hash when read.
      if (end + 1 > size) break
      records.push({ hash: header[1]!, at, start, end })
      at = end + 1
    }
  } finally {
    await handle.close()
  }
  return records
}

/** A range of a pack (a text, or whole records). */
async function readRange(file: string, start: number, end: number): Promise<Buffer> {
  const handle = await open(file, constants.O_RDONLY | NO_FOLLOW)
  try {
    const bytes = Buffer.alloc(end - start)
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, start)
    return bytes.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

function packRecord(hash: string, text: string): Buffer {
  const body = Buffer.from(text)
  return Buffer.concat([Buffer.from(`base ${hash} ${body.length}\n`), body, Buffer.from('\n')])
}

let packCounter = 0

export class BaseStore {
  private folderMade = false
  /** Bases this store wrote: a run that wrote none leaves the folder alone when it ends. */
  written = 0
  private looseKept = 0
  /** This store's pack, once it has one. */
  private pack: string | undefined
  /** Hashes this store put in its pack (or is about to). */
  private readonly packed = new Set<string>()
  private pending: Array<{ hash: string; record: Buffer }> = []
  private batch: Promise<void> | undefined
  /** Where each packed base is, by hash; built on the first read that needs it. */
  private packIndex: Map<string, { pack: string; start: number; end: number }> | undefined

  constructor(readonly root: string) {}

  private path(hash: string): string {
    return syncDirPath(this.root, 'bases', hash)
  }

  /** Keeps the text of a base (its canonical file text, whose sha256 is `hash`). */
  async keep(hash: string, text: string): Promise<void> {
    if (!HASH.test(hash)) return
    if (this.looseKept >= LOOSE_LIMIT) return this.keepPacked(hash, text)
    this.looseKept++
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
      if ((await this.readLoose(hash)) === undefined) {
        await writeFileAtomically(this.path(hash), text, { fsync: false })
        this.written++
      }
    }
  }

  /** Adds a record to the pack; resolves once it is written with the others of this turn. */
  private keepPacked(hash: string, text: string): Promise<void> {
    if (!this.packed.has(hash)) {
      this.packed.add(hash)
      this.pending.push({ hash, record: packRecord(hash, text) })
    }
    this.batch ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.writeBatch())
    return this.batch
  }

  /** One append of every pending record (synchronous: no other keep can interleave). */
  private writeBatch(): void {
    const batch = this.pending
    this.pending = []
    this.batch = undefined
    if (batch.length === 0) return
    const bytes = Buffer.concat(batch.map((entry) => entry.record))
    try {
      this.append(bytes)
    } catch (error) {
      for (const entry of batch) this.packed.delete(entry.hash)
      throw naming(error, this.pack ?? syncDirPath(this.root, 'bases'))
    }
    this.written += batch.length
    this.packIndex = undefined
  }

  private append(bytes: Buffer): void {
    let fd: number | undefined
    if (this.pack !== undefined) {
      try {
        // O_NOFOLLOW: a link put in place of the pack is never written through.
        fd = openSync(this.path(this.pack), constants.O_WRONLY | constants.O_APPEND | NO_FOLLOW)
      } catch (error) {
        // The pack went away (.cms-sync/ removed mid-run): a new one below.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
        this.folderMade = false
      }
    }
    if (fd === undefined) {
      if (!this.folderMade) mkdirSync(syncDirPath(this.root, 'bases'), { recursive: true })
      this.folderMade = true
      this.pack = `pack-${process.pid}-${++packCounter}-${Date.now().toString(36)}`
      // Exclusive: a new file of this run, never one that was there (nor a link).
      fd = openSync(this.path(this.pack), 'ax')
    }
    try {
      writeSync(fd, bytes)
    } finally {
      closeSync(fd)
    }
  }

  /** The base's text, or undefined when it was never kept here (or is damaged). */
  async read(hash: string): Promise<string | undefined> {
    if (!HASH.test(hash)) return undefined
    return (await this.readLoose(hash)) ?? (await this.readPacked(hash))
  }

  private async readLoose(hash: string): Promise<string | undefined> {
    const text = await readFile(this.path(hash), 'utf8').catch(() => undefined)
    return text !== undefined && hashText(text) === hash ? text : undefined
  }

  private async readPacked(hash: string): Promise<string | undefined> {
    if (!this.packIndex) {
      const index = new Map<string, { pack: string; start: number; end: number }>()
      for (const pack of await this.packs())
        for (const record of await packRecords(this.path(pack)).catch(() => []))
          index.set(record.hash, { pack, start: record.start, end: record.end })
      this.packIndex = index
    }
    const found = this.packIndex.get(hash)
    if (!found) return undefined
    const text = await readRange(this.path(found.pack), found.start, found.end).then(
      (bytes) => bytes.toString('utf8'),
      () => undefined,
    )
    return text !== undefined && hashText(text) === hash ? text : undefined
  }

  private async packs(): Promise<string[]> {
    const names = await readdir(syncDirPath(this.root, 'bases')).catch(() => [] as string[])
    return names.filter((name) => PACK.test(name))
  }

  /**
   * Removes the blobs no item of the state refers to; returns how many. Packs are looked at only
   * by a run that wrote one (reading them costs what writing them did, too much for every watch
   * edit): a pack nobody refers to goes, one mostly unused is rewritten with what is still used.
   */
  async prune(store: StateStore): Promise<number> {
    const names = await readdir(syncDirPath(this.root, 'bases')).catch(() => [] as string[])
    if (names.length === 0) return 0
    const referenced = new Set(store.items().map((item) => item.baseHash))
    let removed = 0
    for (const name of names) {
      // A blob nothing refers to (or a temp file an older version, or a crashed prune, left).
      const unused = HASH.test(name) ? !referenced.has(name) : TEMP.test(name) || PACK_TEMP.test(name)
      if (!unused) continue
      await rm(syncDirPath(this.root, 'bases', name), { force: true })
      removed++
    }
    if (this.pack === undefined) return removed
    for (const pack of names.filter((name) => PACK.test(name))) {
      // This run's pack, every base of it still used (a pull): nothing to read.
      if (pack === this.pack && [...this.packed].every((hash) => referenced.has(hash))) continue
      const records = await packRecords(this.path(pack))
      const used = records.filter((record) => referenced.has(record.hash))
      if (used.length === 0) {
        await rm(this.path(pack), { force: true })
        removed += records.length
      } else if (used.length * 2 < records.length) {
        // Rewritten whole (temp file, rename) under a new name, then the old one goes: a crash
        // between the two leaves the bases twice, never not at all.
        const next = `pack-${process.pid}-${++packCounter}-${Date.now().toString(36)}`
        const kept: Buffer[] = []
        for (const record of used) kept.push(await readRange(this.path(pack), record.at, record.end + 1))
        await writeFileAtomically(this.path(next), Buffer.concat(kept), { fsync: false })
        await rm(this.path(pack), { force: true })
        removed += records.length - used.length
      }
    }
    this.packIndex = undefined
    return removed
  }
}
