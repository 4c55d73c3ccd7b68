// The local side of the three-way comparison: every `<folder>/<encoded id>.json` of the enabled
// kinds. A file whose size, mtime and inode equal the stat cache is taken to hold the base
// content and is not read, so a status over an unchanged workspace reads no file content.

import { lstatSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { inParallel } from '../util/in-parallel.js'
import type { Codec } from './codec.js'
import { decodeId } from './file-names.js'
import { FOLDER_OF, type Kind } from './kinds.js'
import type { KnownFile, StatSnapshot } from './known-file.js'
import { absolute } from './layout.js'
import { notAFile, plainFileStat, readLocalFile, sameStat } from './local-file.js'
import { linkOnPath, linkProblem, SymbolicLinkError } from './no-follow.js'
import { type StrayFile, strayFilesOf } from './stray-files.js'

export interface LocalEntry {
  kind: Kind
  id: string
  path: string
  hash: string
  stat: StatSnapshot
  /** Set when the file cannot be pushed as it is (bad JSON, wrong types, id mismatch). */
  problems?: string[]
  /** The id the file says it holds, when that differs from its name (a file renamed by hand). */
  claimsId?: string
}

/** A file that cannot stand for any item (a name no id encodes to, a symbolic link). */
export interface ScanProblem {
  kind: Kind
  path: string
  problems: string[]
  /**
   * The path holds something that is neither an item's file nor gone (a FIFO, a folder, a link,
   * a file that cannot be read): the run leaves its item alone on both sides. Only a file that is
   * gone is a delete. A folder's path (a kind folder that is a link) holds everything under it.
   */
  unsynced?: true
}

/** The names of a kind folder like an item's file, and the entries that are not (strays). */
async function namesIn(
  folder: string,
): Promise<{ names: string[]; others: { name: string; dir: boolean }[] }> {
  try {
    const entries = await readdir(folder, { withFileTypes: true })
    const names: string[] = []
    const others: { name: string; dir: boolean }[] = []
    // Everything named like an item's file, FIFOs and folders too: one that is no file must not
    // look like a deleted item (scanOne reports it as not synced). The rest no run reads.
    for (const entry of entries)
      if (entry.name.endsWith('.json')) names.push(entry.name)
      else others.push({ name: entry.name, dir: entry.isDirectory() })
    return { names: names.sort(), others }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { names: [], others: [] }
    throw error
  }
}

/** Changed files read at the same time: reading waits on the disk. */
const SCAN_PARALLELISM = 32

type Found = { entry?: LocalEntry; problem?: ScanProblem }

export async function scanWorkspace(
  root: string,
  codecs: readonly Codec[],
  cached: (path: string) => KnownFile | undefined,
  ignored: (path: string) => boolean = () => false,
): Promise<{ entries: LocalEntry[]; problems: ScanProblem[]; strays: StrayFile[] }> {
  const entries: LocalEntry[] = []
  const problems: ScanProblem[] = []
  const strays: StrayFile[] = []
  for (const codec of codecs) {
    const folder = FOLDER_OF[codec.kind]
    // A linked kind folder (`content -> ../other`), or a file in its place, is not read: its
    // items are all held.
    const folderProblem = kindFolderProblem(root, folder)
    if (folderProblem !== undefined) {
      problems.push(notSynced(codec, folder, folderProblem).problem!)
      continue
    }
    const listed = await namesIn(absolute(root, folder))
    strays.push(...strayFilesOf(folder, listed.others, ignored))
    const paths = listed.names
      .map((name) => ({ name, path: `${folder}/${name}` }))
      .filter(({ path }) => !ignored(path))
    // One slot per file, read back in name order. A plain file whose stat equals the cache is
    // settled on the spot (most of an unchanged workspace); the rest are read in parallel.
    const found: Found[] = new Array(paths.length)
    const toRead: number[] = []
    paths.forEach(({ name, path }, index) => {
      const settled = fromStatCache(root, codec, cached, name, path)
      if (settled) found[index] = settled
      else toRead.push(index)
    })
    await inParallel(toRead, SCAN_PARALLELISM, async (index) => {
      const { name, path } = paths[index]!
      found[index] = await scanOne(root, codec, cached, name, path)
    })
    for (const { entry, problem } of found) {
      if (entry) entries.push(entry)
      if (problem) problems.push(problem)
    }
  }
  return { entries, problems, strays }
}

const JSON_SUFFIX = '.json'.length

function badName(codec: Codec, path: string): Found {
  return {
    problem: { kind: codec.kind, path, problems: ['the file name is not the encoded form of any id'] },
  }
}

/** The file's entry when it is a plain file the stat cache vouches for, else undefined. */
function fromStatCache(
  root: string,
  codec: Codec,
  cached: (path: string) => KnownFile | undefined,
  name: string,
  path: string,
): Found | undefined {
  const base = cached(path)
  if (!base?.stat) return undefined
  const stat = plainFileStat(root, path)
  if (!stat || !sameStat(base.stat, stat)) return undefined
  const id = decodeId(name.slice(0, -JSON_SUFFIX))
  if (id === undefined) return badName(codec, path)
  // The record's own id and stat where they are equal: a run over 100,000 unchanged files keeps
  // one copy of each, not two.
  return {
    entry: {
      kind: codec.kind,
      id: base.id === id ? base.id : id,
      path,
      hash: base.baseHash,
      stat: base.stat,
    },
  }
}

/** One file of the scan on its own (watch's edit-only runs scan just the files a batch names). */
export async function scanOne(
  root: string,
  codec: Codec,
  cached: (path: string) => KnownFile | undefined,
  name: string,
  path: string,
): Promise<Found> {
  const id = decodeId(name.slice(0, -JSON_SUFFIX))
  if (id === undefined) return badName(codec, path)
  try {
    // A link in place of the file, or of its folder (watch scans single files), is never followed.
    const link = linkOnPath(root, path)
    if (link !== undefined) return notSynced(codec, path, linkProblem(root, link))
    const stat = plainFileStat(root, path)
    if (!stat) {
      const what = await notAFile(root, path)
      if (what)
        return notSynced(codec, path, `not a regular file (${what}); not synced until it is a file again`)
      // Gone because its folder is no folder any more (watch scans single files): not a delete.
      const folder = FOLDER_OF[codec.kind]
      const folderProblem = kindFolderProblem(root, folder)
      return folderProblem === undefined ? {} : notSynced(codec, folder, folderProblem)
    }
    const base = cached(path)
    if (base && sameStat(base.stat, stat))
      return { entry: { kind: codec.kind, id, path, hash: base.baseHash, stat } }
    const parsed = await readLocalFile(root, path, codec, id)
    if (!parsed) return {}
    return {
      entry: {
        kind: codec.kind,
        id,
        path,
        hash: parsed.hash,
        stat,
        ...(parsed.ok ? {} : { problems: parsed.problems }),
        ...(!parsed.ok && parsed.claimsId !== undefined ? { claimsId: parsed.claimsId } : {}),
      },
    }
  } catch (error) {
    // A link put in place between the check and the read.
    if (error instanceof SymbolicLinkError) return notSynced(codec, path, linkProblem(root, error.link))
    // Unreadable (EACCES after a chmod 000, EIO): this file alone, never the whole run.
    const code = (error as NodeJS.ErrnoException).code
    if (code === undefined) throw error
    // Gone while it was looked at: a deleted file, as if the scan had come a moment later.
    if (code === 'ENOENT') return {}
    // Its folder replaced by a file meanwhile: every item there is held, none is deleted.
    if (code === 'ENOTDIR') {
      const folder = FOLDER_OF[codec.kind]
      const folderProblem = kindFolderProblem(root, folder)
      if (folderProblem !== undefined) return notSynced(codec, folder, folderProblem)
    }
    return notSynced(codec, path, `cannot be read (${(error as Error).message}); not synced until it can`)
  }
}

/**
 * Why a kind folder cannot be read (a symbolic link, or a file or anything else that is no folder
 * in its place), undefined when it is a folder or not there. Its items are then left alone on
 * both sides: a folder replaced by a file is not every item deleted.
 */
export function kindFolderProblem(root: string, folder: string): string | undefined {
  if (linkOnPath(root, folder) !== undefined) return linkProblem(root, folder)
  const info = lstatSync(absolute(root, folder), { throwIfNoEntry: false })
  if (info === undefined || info.isDirectory()) return undefined
  return `not a folder, not synced (${info.isFile() ? 'a file' : 'no folder'} is in its place; its items are left alone on both sides until it is a folder again)`
}

function notSynced(codec: Codec, path: string, problem: string): Found {
  return { problem: { kind: codec.kind, path, problems: [problem], unsynced: true } }
}

/** The paths a scan found neither as an item's file nor gone: left alone on every side. */
export function unsyncedPaths(problems: readonly ScanProblem[]): Set<string> {
  return new Set(problems.filter((problem) => problem.unsynced).map((problem) => problem.path))
}

/**
 * Whether a path is held by one of `held`: the path itself, or a path under one (a linked folder
 * holds every item under it, so none of them looks deleted on either side).
 */
export function heldBy(held: ReadonlySet<string>): (path: string) => boolean {
  const folders = [...held].map((path) => `${path}/`)
  if (folders.length === 0) return () => false
  return (path) => held.has(path) || folders.some((folder) => path.startsWith(folder))
}
