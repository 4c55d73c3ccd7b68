// The lines of cms-sync.lock that a save changed, put into the lock in their places: a save of
// one item finds its line by path order (a binary search over the bytes, the lines being sorted
// by byPath) instead of making and sorting every item's line, which cost a one-file push at
// 100,000 items more than its requests (docs/benchmarks.md, "The state stored in buckets").
// Only for a lock this tool wrote (canonical: sorted, one item per line, no conflict region); a
// lock git moved is made whole again from the state (StateStore).
//
// A save whose lines keep their length (a new revision of an item: the hash and the date have
// fixed widths) does not even read the lock: the search reads the few pages it visits from the
// file (FileBytes), and the writer copies the file and overwrites those lines where they stand
// (util/atomic-write.ts patchFileAtomically). At 100,000 items the lock is 23 MB; reading,
// splicing, hashing and writing it from memory cost a one-file push more than its two requests
// (docs/benchmarks.md, "After: the lock written where it changed").

import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'
import type { StatSnapshot } from '../util/atomic-write.js'
import { byPath } from './committed-base.js'

/** A path's new line (lineOf), or undefined: the lock holds no line for it any more. */
export interface LockChange {
  path: string
  line: string | undefined
}

/** Bytes to write at an offset of the lock, over as many bytes as they hold. */
export interface LockPatch {
  offset: number
  bytes: Buffer
}

/** The lock's bytes, as much as the search needs of them: a Buffer, or the file read page by page. */
export interface LockBytes {
  readonly length: number
  at(index: number): number
  /** The first NL at or after `from`, or -1. */
  indexOfNewline(from: number): number
  text(start: number, end: number): string
}

const NL = 10

export function bufferBytes(buffer: Buffer): LockBytes {
  return {
    length: buffer.length,
    at: (index) => buffer[index] as number,
    indexOfNewline: (from) => buffer.indexOf(NL, from),
    text: (start, end) => buffer.toString('utf8', start, end),
  }
}

const PAGE = 64 * 1024

/** cms-sync.lock read a page at a time, as the search asks (synchronous: a few small reads). */
export class FileBytes implements LockBytes {
  readonly length: number
  readonly stat: StatSnapshot
  private readonly pages = new Map<number, Buffer>()

  private constructor(private readonly fd: number) {
    const info = fstatSync(fd)
    this.length = info.size
    this.stat = { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino }
  }

  /** The file open for reading, or undefined when it is not there (or a link). Close it after use. */
  static open(file: string): FileBytes | undefined {
    let fd: number
    try {
      fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ELOOP') return undefined
      throw error
    }
    return new FileBytes(fd)
  }

  close(): void {
    closeSync(this.fd)
  }

  /** How many pages were read so far (each once). */
  get pagesRead(): number {
    return this.pages.size
  }

  private page(number: number): Buffer {
    let page = this.pages.get(number)
    if (!page) {
      const start = number * PAGE
      page = Buffer.alloc(Math.min(PAGE, this.length - start))
      let read = 0
      while (read < page.length) {
        const got = readSync(this.fd, page, read, page.length - read, start + read)
        if (got === 0) break
        read += got
      }
      this.pages.set(number, page)
    }
    return page
  }

  at(index: number): number {
    return this.page(Math.floor(index / PAGE))[index % PAGE] as number
  }

  indexOfNewline(from: number): number {
    for (let number = Math.floor(from / PAGE); number * PAGE < this.length; number++) {
      const page = this.page(number)
      const found = page.indexOf(NL, Math.max(0, from - number * PAGE))
      if (found >= 0) return number * PAGE + found
    }
    return -1
  }

  text(start: number, end: number): string {
    const parts: Buffer[] = []
    for (let at = start; at < end; ) {
      const number = Math.floor(at / PAGE)
      const page = this.page(number)
      const from = at - number * PAGE
      const to = Math.min(page.length, end - number * PAGE)
      parts.push(page.subarray(from, to))
      at = number * PAGE + to
    }
    return Buffer.concat(parts).toString('utf8')
  }
}

/** The end of the line that starts at `start` (its newline, or the text's end). */
function lineEnd(text: LockBytes, start: number): number {
  const end = text.indexOfNewline(start)
  return end < 0 ? text.length : end
}

/** The path of the line that starts at `start` (every item line begins with its path). */
function pathAt(text: LockBytes, start: number): string {
  return (JSON.parse(text.text(start, lineEnd(text, start))) as { path: string }).path
}

/** The start of the first line at or after `at`. */
function lineStartFrom(text: LockBytes, at: number): number {
  if (at === 0 || text.at(at - 1) === NL) return at
  const eol = text.indexOfNewline(at)
  return eol < 0 ? text.length : eol + 1
}

/** The start of the first line from `lo` on whose path is not before `path` (the text's end if none). */
function findLine(text: LockBytes, lo: number, path: string): number {
  let hi = text.length
  while (lo < hi) {
    const mid = lineStartFrom(text, lo + ((hi - lo) >> 1))
    if (mid >= hi || mid === lo) {
      // No line starts between the middle and hi: step over the line at lo.
      if (byPath(pathAt(text, lo), path) >= 0) return lo
      lo = lineStartFrom(text, lo + 1)
      continue
    }
    if (byPath(pathAt(text, mid), path) < 0) lo = lineStartFrom(text, mid + 1)
    else hi = mid
  }
  return lo
}

const HASH_MARK = '#'.charCodeAt(0)
const TARGET_HEAD = '{"lock":'

/** Where the item lines start: after the comment and the target line. */
function bodyStart(text: LockBytes): number {
  let at = 0
  for (;;) {
    if (at >= text.length) return text.length
    const isHead =
      text.at(at) === HASH_MARK ||
      text.text(at, Math.min(text.length, at + TARGET_HEAD.length)) === TARGET_HEAD
    if (!isHead) return at
    at = lineEnd(text, at) + 1
  }
}

/** Each change with where its line is now: [start, end) (end past the newline), and the old line. */
function located(
  text: LockBytes,
  changes: readonly LockChange[],
): { change: LockChange; at: number; end: number; old: string | undefined }[] {
  const sorted = [...changes].sort((a, b) => byPath(a.path, b.path))
  const found = []
  let cursor = bodyStart(text)
  for (const change of sorted) {
    const at = findLine(text, cursor, change.path)
    let end = at
    let old: string | undefined
    if (at < text.length && pathAt(text, at) === change.path) {
      const eol = lineEnd(text, at)
      old = text.text(at, eol)
      end = Math.min(eol + 1, text.length)
    }
    found.push({ change, at, end, old })
    cursor = end
  }
  return found
}

/**
 * The lock's bytes with `changes` in place, or undefined when no line differs (the file is then
 * left as it is). `changes` may come in any order; one per path. Bytes, not a string: the lock of
 * 100,000 items is 23 MB, and decoding and encoding it cost a save more than the splice.
 */
export function spliceLock(text: Buffer, changes: readonly LockChange[]): Buffer | undefined {
  const pieces: Buffer[] = []
  let cursor = 0
  let changed = false
  for (const { change, at, end, old } of located(bufferBytes(text), changes)) {
    pieces.push(text.subarray(cursor, at))
    if (old !== change.line) changed = true
    if (change.line !== undefined) pieces.push(Buffer.from(`${change.line}\n`))
    cursor = end
  }
  pieces.push(text.subarray(cursor))
  return changed ? Buffer.concat(pieces) : undefined
}

/**
 * The changed lines as bytes to write where the old ones stand, when every changed line keeps
 * its place and length (an empty list: none differs); undefined when a line is added, removed or
 * of another length in bytes (spliceLock then).
 */
export function lockPatches(text: LockBytes, changes: readonly LockChange[]): LockPatch[] | undefined {
  const patches: LockPatch[] = []
  for (const { change, at, old } of located(text, changes)) {
    if (old === change.line) continue
    if (old === undefined || change.line === undefined) return undefined
    const bytes = Buffer.from(change.line)
    if (bytes.length !== Buffer.byteLength(old)) return undefined
    patches.push({ offset: at, bytes })
  }
  return patches
}
