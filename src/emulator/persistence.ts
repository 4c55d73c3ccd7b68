// Durable storage for --data: a snapshot plus an append-only journal, and media bytes as
// content-addressed-by-random-name blob files.
//
// Why this shape: every acknowledged write is one journal line appended with a synchronous
// write before the response goes out, so a kill -9 at any moment loses nothing that was
// answered (the bytes are in the kernel). A line cut short by the kill is detected on replay
// and dropped. Snapshots are only ever written to a temp file, fsynced and renamed over the
// old one, so no reader ever sees a torn snapshot; the journal's sequence numbers make a
// crash between "snapshot renamed" and "journal truncated" harmless (old lines are skipped).
// 10,000 writes cost 10,000 short appends, not 10,000 rewrites of a large file.

import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { processIsAlive } from '../util/process-alive.js'

export type Op =
  | { t: 'put'; c: string; k: string; v: unknown }
  | { t: 'del'; c: string; k: string }
  | { t: 'drop'; prefix: string }

export type SnapshotData = { seq: number; collections: Record<string, Array<[string, unknown]>> }

const SNAPSHOT = 'snapshot.json'
const JOURNAL = 'journal.jsonl'
const BLOBS = 'blobs'
const PID = 'emulator.pid'

const openInThisProcess = new Set<string>()

function writeFileDurably(file: string, data: string | Buffer): void {
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`
  const fd = fs.openSync(tmp, 'w')
  try {
    fs.writeFileSync(fd, data)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  fs.renameSync(tmp, file)
  syncDir(path.dirname(file))
}

function syncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r')
    try {
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic there.
  }
}

export class DataDir {
  private journalFd: number | undefined
  private journalBytes = 0
  seq = 0

  constructor(
    readonly dir: string,
    private readonly compactAtBytes = 16 * 1024 * 1024,
  ) {
    fs.mkdirSync(path.join(dir, BLOBS), { recursive: true })
    this.lock()
    // Temp files are what a crash leaves behind mid-write; the renamed originals are intact.
    for (const folder of [dir, path.join(dir, BLOBS)]) {
      for (const name of fs.readdirSync(folder))
        if (name.endsWith('.tmp')) fs.rmSync(path.join(folder, name), { force: true })
    }
  }

  /**
   * One process per data folder: a pid file, taken over when its process is gone, so a
   * restart right after a kill -9 works (a lock with a staleness timeout would refuse it).
   */
  private lock(): void {
    const file = path.join(this.dir, PID)
    let holder: number | undefined
    try {
      holder = Number(fs.readFileSync(file, 'utf8').trim())
    } catch {
      holder = undefined
    }
    const key = path.resolve(this.dir)
    if ((holder && holder !== process.pid && processIsAlive(holder)) || openInThisProcess.has(key)) {
      throw new Error(
        `data folder ${this.dir} is in use by another emulator (process ${holder ?? process.pid})`,
      )
    }
    writeFileDurably(file, String(process.pid))
    openInThisProcess.add(key)
  }

  unlock(): void {
    fs.rmSync(path.join(this.dir, PID), { force: true })
    openInThisProcess.delete(path.resolve(this.dir))
  }

  /** Loads the snapshot and replays the journal on top; a torn or unreadable tail is dropped. */
  load(restore: (collections: SnapshotData['collections']) => void, apply: (op: Op) => void): void {
    const snapshotFile = path.join(this.dir, SNAPSHOT)
    if (fs.existsSync(snapshotFile)) {
      const snapshot = JSON.parse(fs.readFileSync(snapshotFile, 'utf8')) as SnapshotData
      restore(snapshot.collections)
      this.seq = snapshot.seq
    }
    this.replay(apply)
  }

  private replay(apply: (op: Op) => void): void {
    const journalFile = path.join(this.dir, JOURNAL)
    if (!fs.existsSync(journalFile)) return
    const text = fs.readFileSync(journalFile, 'utf8')
    let offset = 0
    while (offset < text.length) {
      const end = text.indexOf('\n', offset)
      if (end < 0) break // the last line never got its newline: a write cut short
      let entry: { s: number; o: Op }
      try {
        entry = JSON.parse(text.slice(offset, end)) as { s: number; o: Op }
      } catch {
        break
      }
      if (entry.s > this.seq) {
        apply(entry.o)
        this.seq = entry.s
      }
      offset = end + 1
    }
  }

  /** Writes a fresh snapshot and starts an empty journal. */
  compact(data: Record<string, Array<[string, unknown]>>): void {
    this.closeJournal()
    writeFileDurably(path.join(this.dir, SNAPSHOT), JSON.stringify({ seq: this.seq, collections: data }))
    writeFileDurably(path.join(this.dir, JOURNAL), '')
    this.journalFd = fs.openSync(path.join(this.dir, JOURNAL), 'a')
    this.journalBytes = 0
  }

  /** Appends one mutation; returns true when the journal has grown enough to compact. */
  append(op: Op): boolean {
    if (this.journalFd === undefined) this.journalFd = fs.openSync(path.join(this.dir, JOURNAL), 'a')
    this.seq++
    const line = `${JSON.stringify({ s: this.seq, o: op })}\n`
    fs.writeSync(this.journalFd, line)
    this.journalBytes += line.length
    return this.journalBytes > this.compactAtBytes
  }

  closeJournal(): void {
    if (this.journalFd !== undefined) fs.closeSync(this.journalFd)
    this.journalFd = undefined
  }

  blobPath(name: string): string {
    return path.join(this.dir, BLOBS, name)
  }

  /** Bytes go to a new file under a random name before any record points at them. */
  writeBlob(bytes: Buffer): string {
    const name = randomBytes(12).toString('hex')
    writeFileDurably(this.blobPath(name), bytes)
    return name
  }

  /** Removes blob files no record points at (left by a crash or by replaced uploads). */
  sweepBlobs(inUse: Set<string>): void {
    for (const name of fs.readdirSync(path.join(this.dir, BLOBS))) {
      if (!inUse.has(name)) fs.rmSync(this.blobPath(name), { force: true })
    }
  }
}
