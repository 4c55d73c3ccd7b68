// cms-sync.lock: the committed base (design.md "Three-way state"). Not to be confused with
// .cms-sync/lock, the process lock (lock.ts). It holds, per synced item, what the state file
// holds minus the local-only stat cache: kind, id, path, the hash of the file as synced, and the
// server's revision marker then. A fresh clone or a CI checkout has no .cms-sync/, and plans
// against these lines exactly as a workspace with local state plans against .cms-sync/state/.
//
// The format is made for git (docs/lock.md): a comment, one target line, then one JSON object
// per item on its own line, sorted by path, so two branches that synced different items merge
// like any text file. A line is only ever written whole by a run that synced its item, so its
// hash and revision are one fact about the server ("revision R held this file"). What git can
// make of a line (a conflict region, the same item twice after a union merge) is never
// trusted: such an item has no base here, which gives a conflict at worst, never an overwrite.

import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import path from 'node:path'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import { patchFileAtomically, type StatSnapshot, writeFileAtomically } from '../util/atomic-write.js'
import { firstDuplicateKey } from '../workspace/duplicate-keys.js'
import { decodeId } from '../workspace/file-names.js'
import { FOLDER_OF, isBytes, KINDS, type Kind } from '../workspace/kinds.js'
import { isPlainRelative, itemPath } from '../workspace/layout.js'
import { refuseLinks } from '../workspace/no-follow.js'
import { tempDirOf } from '../workspace/temp-files.js'
import type { ItemState, Target } from './item-state.js'

export const LOCK_FILE = 'cms-sync.lock'
const FORMAT = 1
const COMMENT =
  '# cms-sync.lock: the base of every synced item; rewritten by every sync, commit it with the files (docs/lock.md)'

export interface CommittedBase {
  target: Target
  /** The items whose lines can be trusted, by path. */
  items: Map<string, ItemState>
  /** Paths left without a base: inside a git conflict region, or listed more than once with different facts. */
  untrusted: Set<string>
}

export class LockFileError extends CliError {
  constructor(line: number | undefined, problem: string) {
    super(
      `${LOCK_FILE}${line === undefined ? '' : `, line ${line}`}: ${problem}; restore it from git (\`git checkout -- ${LOCK_FILE}\`) or delete it (the next sync rebuilds it, comparing both sides)`,
      ExitCode.usage,
    )
  }
}

export function lockFilePath(root: string): string {
  return path.join(root, LOCK_FILE)
}

/** One item's line: fixed key order, so the same base always gives the same bytes. */
export function lineOf(item: ItemState): string {
  const media = item.media ? { name: item.media.name, folder: item.media.folder } : {}
  return JSON.stringify({
    path: item.path,
    kind: item.kind,
    id: item.id,
    hash: item.baseHash,
    rev: item.remoteRev,
    ...media,
    ...(item.inherited ? { inherited: true } : {}),
  })
}

/** The lock's text for a target and its items: sorted by path, one line per item. */
export function lockText(target: Target, items: Iterable<ItemState>): string {
  const lines = [...items].map((item) => [item.path, lineOf(item)] as const)
  lines.sort((a, b) => byPath(a[0], b[0]))
  return lockTextOfLines(
    target,
    lines.map(([, line]) => line),
  )
}

/** The order of the lock's lines: code-unit order, the same on every machine (no locale). */
export function byPath(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** The lock's text from its item lines (lineOf), already in path order (byPath). */
export function lockTextOfLines(target: Target, lines: readonly string[]): string {
  const head = JSON.stringify({
    lock: FORMAT,
    server: target.server,
    project: target.project,
    environment: target.environment,
  })
  return `${COMMENT}\n${head}\n${lines.map((line) => `${line}\n`).join('')}`
}

/** Writes the lock (atomically); returns its stat as written. */
export async function writeLock(root: string, text: string | Uint8Array): Promise<StatSnapshot> {
  // writeFileAtomically writes through a link; cms-sync.lock checked out as one is refused instead.
  refuseLinks(root, LOCK_FILE)
  // The temp file out of the workspace's top folder, where git would see one a kill left.
  return writeFileAtomically(lockFilePath(root), text, { tempDir: tempDirOf(root) })
}

/**
 * Writes the lock with its lines changed in place (lock-splice.ts lockPatches), atomically;
 * undefined, and nothing written, when the lock is no longer the file `expect` describes.
 */
export async function patchLock(
  root: string,
  patches: readonly { offset: number; bytes: Uint8Array }[],
  expect: StatSnapshot,
): Promise<StatSnapshot | undefined> {
  refuseLinks(root, LOCK_FILE)
  return patchFileAtomically(lockFilePath(root), patches, { tempDir: tempDirOf(root), expect })
}

/**
 * The lock's bytes with the stat of the very file they were read from (the open file's, not the
 * path's a moment later): git may put another file in its place while the bytes are compared,
 * and only this stat tells the file compared from the one there now.
 */
export function readLockSync(root: string): { bytes: Buffer; stat: StatSnapshot } | undefined {
  let fd: number
  try {
    fd = openSync(lockFilePath(root), 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const info = fstatSync(fd)
    const bytes = readFileSync(fd)
    return { bytes, stat: { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino } }
  } finally {
    closeSync(fd)
  }
}

/** The text of cms-sync.lock with the stat of the file it was read from, or undefined when the workspace has none. */
export async function readLockText(root: string): Promise<{ text: string; stat: StatSnapshot } | undefined> {
  let handle: FileHandle
  try {
    handle = await open(lockFilePath(root), 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const info = await handle.stat()
    const text = await handle.readFile('utf8')
    return { text, stat: { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino } }
  } finally {
    await handle.close()
  }
}

const CONFLICT_START = /^<{7}(?: |$)/
const CONFLICT_SIDE = /^(?:={7}|\|{7}(?: |$))/
const CONFLICT_END = /^>{7}(?: |$)/

function isTarget(value: Record<string, unknown>): boolean {
  return (
    value.lock === FORMAT &&
    typeof value.server === 'string' &&
    typeof value.project === 'string' &&
    typeof value.environment === 'string'
  )
}

export function parseLock(text: string): CommittedBase {
  let target: Target | undefined
  const seen = new Map<string, { item: ItemState; line: string }>()
  const untrusted = new Set<string>()
  let inConflict = false
  const lines = text.split('\n')
  for (const [index, raw] of lines.entries()) {
    const number = index + 1
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (CONFLICT_START.test(line)) {
      inConflict = true
      continue
    }
    if (CONFLICT_END.test(line)) {
      inConflict = false
      continue
    }
    if (CONFLICT_SIDE.test(line) || line.trim() === '' || line.startsWith('#')) continue
    let value: Record<string, unknown>
    try {
      value = JSON.parse(line) as Record<string, unknown>
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw new Error('not an object')
    } catch {
      throw new LockFileError(number, 'expected one JSON object per line')
    }
    // A reviewer reads the first of two equal keys, JSON.parse keeps the last.
    const duplicate = firstDuplicateKey(line)
    if (duplicate)
      throw new LockFileError(
        number,
        `column ${duplicate.offset + 1}: the key ${JSON.stringify(duplicate.key)} appears twice`,
      )
    if ('lock' in value) {
      if (!isTarget(value))
        throw new LockFileError(
          number,
          `expected {"lock": ${FORMAT}, "server", "project", "environment"} (a newer cms-sync may have written it)`,
        )
      const next = {
        server: value.server as string,
        project: value.project as string,
        environment: value.environment as string,
      }
      // Two target lines (a merge of branches bound to different targets) cannot both hold.
      if (target && JSON.stringify(target) !== JSON.stringify(next))
        throw new LockFileError(number, 'it names two different targets (a merge of two workspaces?)')
      target = next
      continue
    }
    const item = itemOf(value, number)
    const earlier = seen.get(item.path)
    if (inConflict || (earlier && earlier.line !== line)) untrusted.add(item.path)
    seen.set(item.path, { item, line })
  }
  if (!target) throw new LockFileError(undefined, 'the target line ({"lock": 1, "server", ...}) is missing')
  const items = new Map<string, ItemState>()
  for (const [p, { item }] of seen) if (!untrusted.has(p)) items.set(p, item)
  return { target, items, untrusted }
}

function itemOf(value: Record<string, unknown>, number: number): ItemState {
  const { path: p, kind, id, hash, rev } = value
  const expect = (ok: boolean, what: string) => {
    if (!ok) throw new LockFileError(number, what)
  }
  expect(
    typeof kind === 'string' && (KINDS as readonly string[]).includes(kind),
    `"kind": expected one of ${KINDS.join(', ')}`,
  )
  expect(typeof id === 'string' && id !== '', '"id": expected a non-empty string')
  expect(typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash), '"hash": expected a sha256 in hex')
  expect(typeof rev === 'string', '"rev": expected a string')
  expect(
    typeof p === 'string' && isPlainRelative(p),
    '"path": expected a workspace path like "content/home.json"',
  )
  const k = kind as Kind
  const itemPathText = p as string
  if (isBytes(k)) {
    expect(itemPathText.startsWith(`${FOLDER_OF[k]}/`), `"path": a ${k} path starts with ${FOLDER_OF[k]}/`)
    expect(
      typeof value.name === 'string' && typeof value.folder === 'string',
      `${k} needs "name" and "folder"`,
    )
  } else {
    // The path of a JSON kind is its id's file name: a line cannot point one item at another's file.
    let expected: string | undefined
    try {
      expected = itemPath(k, id as string)
    } catch {
      expected = undefined
    }
    expect(
      expected === itemPathText,
      `"path": expected ${expected ?? 'the file name of the id'} for ${k} ${JSON.stringify(id)}`,
    )
    expect(
      decodeId(itemPathText.slice(FOLDER_OF[k].length + 1, -'.json'.length)) === id,
      '"path" does not match "id"',
    )
  }
  return {
    kind: k,
    id: id as string,
    path: itemPathText,
    baseHash: hash as string,
    remoteRev: rev as string,
    ...(isBytes(k)
      ? { media: { sha256: hash as string, name: value.name as string, folder: value.folder as string } }
      : {}),
    // Another machine's word, or a pull request's: see ItemState.fromLock.
    fromLock: true as const,
    ...(value.inherited === true ? { inherited: true as const } : {}),
  }
}

/** Whether the lock and the state record the same base for an item (the stat cache aside). */
export function sameBase(a: ItemState, b: ItemState): boolean {
  return a.kind === b.kind && a.id === b.id && a.baseHash === b.baseHash && a.remoteRev === b.remoteRev
}
