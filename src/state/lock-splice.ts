// The lines of cms-sync.lock that a save changed, put into the lock in their places: a save of
// one item finds its line by path order (a binary search over the bytes, the lines being sorted
// by byPath) instead of making and sorting every item's line, which cost a one-file push at
// 100,000 items more than its requests (docs/benchmarks.md, "The state stored in buckets").
// Only for a lock this tool wrote (canonical: sorted, one item per line, no conflict region); a
// lock git moved is made whole again from the state (StateStore).

import { byPath } from './committed-base.js'

/** A path's new line (lineOf), or undefined: the lock holds no line for it any more. */
export interface LockChange {
  path: string
  line: string | undefined
}

const NL = 10

/** The end of the line that starts at `start` (its newline, or the text's end). */
function lineEnd(text: Buffer, start: number): number {
  const end = text.indexOf(NL, start)
  return end < 0 ? text.length : end
}

/** The path of the line that starts at `start` (every item line begins with its path). */
function pathAt(text: Buffer, start: number): string {
  return (JSON.parse(text.toString('utf8', start, lineEnd(text, start))) as { path: string }).path
}

/** The start of the first line at or after `at`. */
function lineStartFrom(text: Buffer, at: number): number {
  if (at === 0 || text[at - 1] === NL) return at
  const eol = text.indexOf(NL, at)
  return eol < 0 ? text.length : eol + 1
}

/** The start of the first line from `lo` on whose path is not before `path` (the text's end if none). */
function findLine(text: Buffer, lo: number, path: string): number {
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
const TARGET_HEAD = Buffer.from('{"lock":')

/** Where the item lines start: after the comment and the target line. */
function bodyStart(text: Buffer): number {
  let at = 0
  for (;;) {
    if (at >= text.length) return text.length
    const isHead = text[at] === HASH_MARK || text.subarray(at, at + TARGET_HEAD.length).equals(TARGET_HEAD)
    if (!isHead) return at
    at = lineEnd(text, at) + 1
  }
}

/**
 * The lock's bytes with `changes` in place, or undefined when no line differs (the file is then
 * left as it is). `changes` may come in any order; one per path. Bytes, not a string: the lock of
 * 100,000 items is 23 MB, and decoding and encoding it cost a save more than the splice.
 */
export function spliceLock(text: Buffer, changes: readonly LockChange[]): Buffer | undefined {
  const sorted = [...changes].sort((a, b) => byPath(a.path, b.path))
  const pieces: Buffer[] = []
  let cursor = bodyStart(text)
  pieces.push(text.subarray(0, cursor))
  let changed = false
  for (const change of sorted) {
    const at = findLine(text, cursor, change.path)
    pieces.push(text.subarray(cursor, at))
    let end = at
    let old: string | undefined
    if (at < text.length && pathAt(text, at) === change.path) {
      const eol = lineEnd(text, at)
      old = text.toString('utf8', at, eol)
      end = Math.min(eol + 1, text.length)
    }
    if (old !== change.line) changed = true
    if (change.line !== undefined) pieces.push(Buffer.from(`${change.line}\n`))
    cursor = end
  }
  pieces.push(text.subarray(cursor))
  return changed ? Buffer.concat(pieces) : undefined
}
