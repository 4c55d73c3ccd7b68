// The lines of cms-sync.lock that a save changed, put into the lock's text in their places: a save
// of one item finds its line by path order (a binary search over the text, the lines being
// sorted by byPath) instead of making and sorting every item's line, which cost a one-file push
// at 100,000 items 0.42 s. Only for a text this tool wrote (canonical: sorted, one item per line,
// no conflict region); a lock git moved is made again whole from the state (StateStore).

import { byPath } from './committed-base.js'

/** A path's new line (lineOf), or undefined: the lock holds no line for it any more. */
export interface LockChange {
  path: string
  line: string | undefined
}

/** The path of the line that starts at `start` (every item line begins with its path). */
function pathAt(text: string, start: number): string {
  const end = text.indexOf('\n', start)
  const line = text.slice(start, end < 0 ? text.length : end)
  return (JSON.parse(line) as { path: string }).path
}

/** The start of the first line at or after `at`. */
function lineStartFrom(text: string, at: number): number {
  if (at === 0 || text.charCodeAt(at - 1) === 10) return at
  const eol = text.indexOf('\n', at)
  return eol < 0 ? text.length : eol + 1
}

/** The start of the first line from `lo` on whose path is not before `path` (the text's end if none). */
function findLine(text: string, lo: number, path: string): number {
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

/** Where the item lines start: after the comment and the target line. */
function bodyStart(text: string): number {
  let at = 0
  for (;;) {
    if (text[at] !== '#' && !text.startsWith('{"lock":', at)) return at
    const eol = text.indexOf('\n', at)
    if (eol < 0) return text.length
    at = eol + 1
  }
}

/**
 * The lock's text with `changes` in place, or undefined when no line differs (the file is then
 * left as it is). `changes` may come in any order; one per path.
 */
export function spliceLock(text: string, changes: readonly LockChange[]): string | undefined {
  const sorted = [...changes].sort((a, b) => byPath(a.path, b.path))
  const pieces: string[] = []
  let cursor = bodyStart(text)
  pieces.push(text.slice(0, cursor))
  let changed = false
  for (const change of sorted) {
    const at = findLine(text, cursor, change.path)
    pieces.push(text.slice(cursor, at))
    let end = at
    let old: string | undefined
    if (at < text.length && pathAt(text, at) === change.path) {
      const eol = text.indexOf('\n', at)
      end = eol < 0 ? text.length : eol + 1
      old = text.slice(at, eol < 0 ? text.length : eol)
    }
    if (old !== change.line) changed = true
    if (change.line !== undefined) pieces.push(`${change.line}\n`)
    cursor = end
  }
  pieces.push(text.slice(cursor))
  return changed ? pieces.join('') : undefined
}
