// A symbolic link anywhere in the workspace is never followed, for reading or for writing. A link
// may point anywhere (`media -> ~/.ssh`, a committed `.cms-sync -> /tmp/x`): what cms-sync read
// through it would go to the server (and media bytes are public), what it wrote would land
// outside the workspace (media.yaml linked to a shell start-up file would run the server's media
// names). So a path is used only when no part of it below the root is a link, each part checked
// with lstat (the root itself may be one, as /tmp is on macOS), and files are read with
// O_NOFOLLOW, so a link put in place of the last part after the check is refused as well.

import { constants, type Dirent, lstatSync, readdirSync, readlinkSync } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { ConfigError } from '../config/errors.js'
import { printable } from '../util/printable.js'
import { absolute, SYNC_DIR } from './layout.js'

/** What the scan reports for a link in place of a file or folder (the path leads the line). */
export const LINK_PROBLEM = 'not synced: a symbolic link'

/** O_NOFOLLOW where the platform has it (not on Windows, where links need privileges to make). */
export const NO_FOLLOW = constants.O_NOFOLLOW ?? 0

export class SymbolicLinkError extends Error {
  override readonly name = 'SymbolicLinkError'
  /** What is wrong with the link, without its path: for a message that names the file itself. */
  readonly problem: string
  constructor(
    /** The workspace-relative path of the link itself (a folder above the file, or the file). */
    readonly link: string,
    readonly target: string | undefined,
  ) {
    const problem = `a symbolic link${target === undefined ? '' : ` (to ${printable(target)})`}; ${NEVER_FOLLOWED}`
    super(`${printable(link)}: ${problem}`)
    this.problem = problem
  }
}

const NEVER_FOLLOWED = 'cms-sync never reads or writes through a link, which could lead outside the workspace'

/** Where a link points, as it says (for messages); undefined when it cannot be read. */
function targetOf(root: string, relativePath: string): string | undefined {
  try {
    return readlinkSync(absolute(root, relativePath))
  } catch {
    return undefined
  }
}

/** The scan's problem text for a link in place of an item's file or of a folder. */
export function linkProblem(root: string, link: string): string {
  const target = targetOf(root, link)
  return `${LINK_PROBLEM}${target === undefined ? '' : ` (to ${target})`}; ${NEVER_FOLLOWED}`
}

/**
 * The first part of a workspace-relative path, from the top, that is a symbolic link (itself
 * included), as a workspace-relative path; undefined when none is. A part that does not exist
 * ends the walk: nothing below it can be a link. Synchronous: a few lstat calls cost less than
 * their trips through the thread pool.
 */
export function linkOnPath(root: string, relativePath: string): string | undefined {
  let rel = ''
  for (const part of relativePath.split('/')) {
    rel = rel === '' ? part : `${rel}/${part}`
    const info = lstatSync(absolute(root, rel), { throwIfNoEntry: false })
    if (info === undefined) return undefined
    if (info.isSymbolicLink()) return rel
  }
  return undefined
}

/** Throws SymbolicLinkError when any part of the path is a link: the one check before every write. */
export function refuseLinks(root: string, relativePath: string): void {
  const link = linkOnPath(root, relativePath)
  if (link !== undefined) throw new SymbolicLinkError(link, targetOf(root, link))
}

/** Opens a workspace file for reading, never through a link (ENOENT as fs gives it). */
export async function openNoFollow(root: string, relativePath: string): Promise<FileHandle> {
  const cut = relativePath.lastIndexOf('/')
  if (cut > 0) refuseLinks(root, relativePath.slice(0, cut))
  try {
    return await open(absolute(root, relativePath), constants.O_RDONLY | NO_FOLLOW)
  } catch (error) {
    // O_NOFOLLOW's answer for a link in the last part (a link made after the folders' check).
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') refuseLinks(root, relativePath)
    throw error
  }
}

/** A workspace file's text, never read through a link. */
export async function readNoFollow(root: string, relativePath: string): Promise<string> {
  const handle = await openNoFollow(root, relativePath)
  try {
    return await handle.readFile('utf8')
  } finally {
    await handle.close()
  }
}

/**
 * cms-sync's own files and folders at the top of the workspace. A link in place of one is refused
 * before a command reads or writes anything: each is read or written on every run, and none of
 * them can be skipped the way an item's file is.
 */
export const OWN_ENTRIES = ['cms-sync.yaml', 'cms-sync.lock', 'media.yaml', '.cmsyncignore', SYNC_DIR]

/** The first of OWN_ENTRIES, or of the entries of .cms-sync/ (its state, logs, trash), that is a link. */
export function ownEntryLink(root: string): SymbolicLinkError | undefined {
  for (const name of OWN_ENTRIES) {
    if (lstatSync(absolute(root, name), { throwIfNoEntry: false })?.isSymbolicLink())
      return new SymbolicLinkError(name, targetOf(root, name))
  }
  let entries: Dirent[]
  try {
    entries = readdirSync(absolute(root, SYNC_DIR), { withFileTypes: true })
  } catch {
    return undefined
  }
  const link = entries.find((entry) => entry.isSymbolicLink())
  if (link === undefined) return undefined
  const rel = `${SYNC_DIR}/${link.name}`
  return new SymbolicLinkError(rel, targetOf(root, rel))
}

/**
 * Refuses a workspace where cms-sync's own files or .cms-sync/ are symbolic links, before any of
 * them is read or written (exit 2): through a committed `.cms-sync -> /elsewhere` the state,
 * logs and trash would go outside the workspace, and a linked media.yaml would be overwritten
 * wherever it points. Every command that opens a workspace calls it before reading its config.
 */
export function refuseOwnLinks(root: string): void {
  const link = ownEntryLink(root)
  if (link)
    throw new ConfigError(
      `${link.message}: replace it with the ${link.link === SYNC_DIR ? 'folder' : 'file'} itself (nothing was read or written)`,
    )
}
