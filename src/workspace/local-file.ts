// Reading one workspace file into its validated file object and hash. A valid file's hash is
// the hash of its canonical form, so re-indenting (or moving a top-level key, whose order the
// server fixes) is not an edit, while reordering nested keys (fields, tabs, inputs) is; an
// invalid file gets a hash of its raw bytes, so it shows as a local change and its problems
// are reported when it would be pushed.

import { lstatSync } from 'node:fs'
import { lstat } from 'node:fs/promises'
import { type Codec, fileBytes, hashText, type JsonObject } from './codec.js'
import { firstDuplicateKey } from './duplicate-keys.js'
import { nestsDeeperThan, tooDeepMessage } from './json-depth.js'
import type { StatSnapshot } from './known-file.js'
import { absolute } from './layout.js'
import { readNoFollow } from './no-follow.js'

export type ParsedFile =
  | { ok: true; hash: string; file: JsonObject; text: string }
  | { ok: false; hash: string; problems: string[]; claimsId?: string }

/** The id a file says it holds when that differs from its name (a file renamed by hand). */
function claimedId(value: unknown, expectedId: string): string | undefined {
  const id = (value as { id?: unknown } | null)?.id
  return typeof id === 'string' && id !== '' && id !== expectedId ? id : undefined
}

/**
 * The server refuses JSON bodies over 50 MB (upstream-server.md §8.2), and resets the
 * connection while the body is still being sent, which looks like a network failure and
 * would be retried. A file that large is refused here, named, before any request.
 */
export const MAX_JSON_FILE_BYTES = 50 * 1024 * 1024

/** 1-based line and column of a character offset, as editors count them. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)))
  const lastBreak = before.lastIndexOf('\n')
  return { line: before.split('\n').length, column: before.length - lastBreak }
}

/**
 * JSON.parse's complaint as `file:line:column: invalid JSON: ...`, the form editors and
 * terminals jump to. V8 gives a character offset ("at position 39"), or none when the text
 * ends early (then the error is at the end).
 */
function jsonProblem(error: Error, text: string, file: string | undefined): string {
  const at = /at position (\d+)/.exec(error.message)
  const where = lineAndColumn(text, at ? Number(at[1]) : text.length)
  const what = error.message
    .replace(/ in JSON at position \d+( \(line \d+ column \d+\))?/, '')
    .replace(/, ".*" is not valid JSON$/s, '')
  return `${file ?? '(file)'}:${where.line}:${where.column}: invalid JSON: ${what}`
}

export function parseFileText(codec: Codec, rawText: string, expectedId: string, file?: string): ParsedFile {
  // A UTF-8 byte-order mark (some Windows editors write one) is no part of the JSON.
  const text = rawText.charCodeAt(0) === 0xfeff ? rawText.slice(1) : rawText
  const bytes = Buffer.byteLength(text)
  if (bytes > MAX_JSON_FILE_BYTES) {
    return {
      ok: false,
      hash: hashText(`invalid\0${text}`),
      problems: [
        `the file is ${Math.ceil(bytes / 1024 / 1024)} MB; the server accepts JSON documents up to ${MAX_JSON_FILE_BYTES / 1024 / 1024} MB`,
      ],
    }
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return {
      ok: false,
      hash: hashText(`invalid\0${text}`),
      problems: [jsonProblem(error as Error, text, file)],
    }
  }
  // The key a reviewer reads first is not the one JSON.parse keeps: refused, by place.
  const duplicate = firstDuplicateKey(text)
  if (duplicate) {
    const where = lineAndColumn(text, duplicate.offset)
    return {
      ok: false,
      hash: hashText(`invalid\0${text}`),
      problems: [
        `${file ?? '(file)'}:${where.line}:${where.column}: the key ${JSON.stringify(duplicate.key)} appears twice in one object (JSON keeps the last, a reader sees the first); keep one`,
      ],
    }
  }
  if (nestsDeeperThan(value))
    return { ok: false, hash: hashText(`invalid\0${text}`), problems: [`the file ${tooDeepMessage()}`] }
  const checked = codec.validate(value, expectedId)
  if (!checked.ok) {
    const claimsId = claimedId(value, expectedId)
    return {
      ok: false,
      hash: hashText(`invalid\0${text}`),
      problems: checked.problems,
      ...(claimsId === undefined ? {} : { claimsId }),
    }
  }
  const canonical = fileBytes(checked.file)
  return { ok: true, hash: canonical.hash, file: checked.file, text: canonical.text }
}

export async function readLocalFile(
  root: string,
  relativePath: string,
  codec: Codec,
  id: string,
): Promise<ParsedFile | undefined> {
  let text: string
  try {
    // Never through a link (SymbolicLinkError): it may lead outside the workspace (no-follow.ts).
    text = await readNoFollow(root, relativePath)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  return parseFileText(codec, text, id, relativePath)
}

/**
 * The stat of the plain file at the path, or undefined when there is none: gone, or something
 * else in its place (a link, which is never followed, a folder, a FIFO).
 */
export async function statLocalFile(root: string, relativePath: string): Promise<StatSnapshot | undefined> {
  try {
    const info = await lstat(absolute(root, relativePath))
    if (!info.isFile()) return undefined
    return { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/**
 * The stat of a plain file (not a link, not a folder), else undefined: the scan's fast path.
 * Synchronous: ten thousand lstat calls take tens of milliseconds; as promises, each one's round
 * trip through the thread pool costs more than the call itself.
 */
export function plainFileStat(root: string, relativePath: string): StatSnapshot | undefined {
  const own = lstatOrNothing(absolute(root, relativePath))
  return own?.isFile() ? { size: own.size, mtimeMs: own.mtimeMs, ino: own.ino } : undefined
}

/**
 * What stands at a path that is there but is no regular file (a FIFO, a folder, a socket, a
 * device), for the message; undefined for a regular file or nothing. A link is not looked through.
 */
export async function notAFile(root: string, relativePath: string): Promise<string | undefined> {
  const info = await lstat(absolute(root, relativePath)).catch(() => undefined)
  if (!info || info.isFile()) return undefined
  if (info.isSymbolicLink()) return 'a symbolic link'
  if (info.isFIFO()) return 'a FIFO'
  if (info.isDirectory()) return 'a folder'
  if (info.isSocket()) return 'a socket'
  return 'a device'
}

export function sameStat(a: StatSnapshot | undefined, b: StatSnapshot | undefined): boolean {
  return !!a && !!b && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino
}

/**
 * The lstat of a path, or undefined when nothing is there, also when a folder on the way is no
 * folder (ENOTDIR: `schemas` replaced by a file leaves no `schemas/x.json`).
 */
export function lstatOrNothing(file: string): import('node:fs').Stats | undefined {
  try {
    return lstatSync(file, { throwIfNoEntry: false })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined
    throw error
  }
}
