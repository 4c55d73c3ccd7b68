// Every change cms-sync makes to workspace files. Files are written to a temp file and renamed,
// and any file it overwrites or deletes is first copied to .cms-sync/trash/<run>/<path>, so
// no edit is ever lost even when a pull or a --prefer decision turns out to be wrong. No write
// goes through a symbolic link (no-follow.ts): a path with a link in any part is refused.

import { access, copyFile, lstat, mkdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { claimName, createFileAtomically, writeFileAtomically } from '../util/atomic-write.js'
import { hashText } from './codec.js'
import { Durability } from './durability.js'
import type { StatSnapshot } from './known-file.js'
import { absolute, SYNC_DIR, syncDirPath } from './layout.js'
import { refuseLinks } from './no-follow.js'
import { tempDirOf } from './temp-files.js'

/**
 * Told before each workspace file a run writes (with the sha256 of the bytes about to land) or
 * deletes, so the watcher can drop the echo of our own write but not a user's edit after it.
 */
export type BeforeLocalWrite = (relativePath: string, sha256: string | 'deleted') => void

export class LocalWriter {
  /**
   * @param runId names this run's trash folder (a timestamp), so one run's losers stay together.
   * @param durability collects what this writer changed; flush it before the state records it.
   */
  constructor(
    readonly root: string,
    readonly runId: string,
    private readonly beforeWrite: BeforeLocalWrite = () => {},
    readonly durability = new Durability(root),
  ) {}

  private tempDirChecked = false

  /** Temp files go here, out of the synced folders (util/atomic-write.ts); never through a link. */
  private get tempDir(): string {
    if (!this.tempDirChecked) {
      refuseLinks(this.root, `${SYNC_DIR}/tmp`)
      this.tempDirChecked = true
    }
    return tempDirOf(this.root)
  }

  private trashPath(relativePath: string, suffix = ''): string {
    return syncDirPath(this.root, 'trash', this.runId, ...`${relativePath}${suffix}`.split('/'))
  }

  /** Where this run keeps the copy of a file it replaced, workspace-relative (for messages). */
  trashedCopyOf(relativePath: string): string {
    return [SYNC_DIR, 'trash', this.runId, relativePath].join('/')
  }

  /** Copies the current file to trash; false when there was none. */
  async keepInTrash(relativePath: string): Promise<boolean> {
    // copyFile follows a link: the trash would get a copy of whatever it points at.
    refuseLinks(this.root, relativePath)
    return this.copyToTrash(relativePath)
  }

  /** keepInTrash, for a path its caller has just checked for links. */
  private async copyToTrash(relativePath: string): Promise<boolean> {
    const source = absolute(this.root, relativePath)
    try {
      await access(source)
    } catch {
      return false
    }
    const target = this.trashPath(relativePath)
    await mkdir(path.dirname(target), { recursive: true })
    await copyFile(source, target)
    this.durability.note(target)
    return true
  }

  /**
   * Keeps a server version that lost (to --prefer local or resolve --keep local) or is deleted
   * in trash; returns where, relative to the workspace.
   */
  async keepRemoteInTrash(relativePath: string, text: string): Promise<string> {
    const target = this.trashPath(relativePath, '.remote')
    await mkdir(path.dirname(target), { recursive: true })
    // Whole or not at all: the trash copy is the only copy of the server version that lost.
    await writeFileAtomically(target, text, { fsync: false, tempDir: this.tempDir })
    this.durability.note(target)
    return path.relative(this.root, target).split(path.sep).join('/')
  }

  /** Keeps a form's entries (about to be deleted with it) in trash as `<path without .json>.entries.json`. */
  async keepEntriesInTrash(relativePath: string, text: string): Promise<void> {
    const target = this.trashPath(relativePath.replace(/\.json$/, ''), '.entries.json')
    await mkdir(path.dirname(target), { recursive: true })
    await writeFileAtomically(target, text)
    this.durability.note(target)
  }

  /** Keeps a file (a media server version that lost) in trash as `<path>.remote`; moves it there. */
  async keepRemoteFileInTrash(relativePath: string, sourceFile: string): Promise<string> {
    const target = this.trashPath(relativePath, '.remote')
    await mkdir(path.dirname(target), { recursive: true })
    await rename(sourceFile, target)
    this.durability.note(target)
    return path.relative(this.root, target).split(path.sep).join('/')
  }

  /**
   * Puts a finished file (a media download in .cms-sync/tmp/, same file system) at the path, so
   * readers never see half a file. `fresh`: the plan saw the path free, and a file that appeared
   * since is never replaced (FileAppearedError); otherwise the old file goes to trash first.
   * Returns the placed file's stat.
   */
  async place(
    relativePath: string,
    sourceFile: string,
    opts: { sha256: string; fresh?: boolean },
  ): Promise<StatSnapshot> {
    if (opts.fresh) refuseFolderLinks(this.root, relativePath)
    else refuseLinks(this.root, relativePath)
    if (!opts.fresh) await this.copyToTrash(relativePath)
    this.beforeWrite(relativePath, opts.sha256)
    const file = absolute(this.root, relativePath)
    await this.folderFor(file)
    const info = await lstat(sourceFile)
    if (opts.fresh) claimName(sourceFile, file)
    else await rename(sourceFile, file)
    this.durability.note(file)
    return { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino }
  }

  /** Moves a file to another path in the workspace (a media move); never over an existing file. */
  async move(fromPath: string, toPath: string, sha256: string): Promise<void> {
    refuseLinks(this.root, fromPath)
    refuseLinks(this.root, toPath)
    this.beforeWrite(fromPath, 'deleted')
    this.beforeWrite(toPath, sha256)
    const target = absolute(this.root, toPath)
    await mkdir(path.dirname(target), { recursive: true })
    try {
      await access(target)
      throw new Error(`cannot move ${fromPath} to ${toPath}: a file is already there`)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    await rename(absolute(this.root, fromPath), target)
    this.durability.note(target)
  }

  /** Replaces (or creates) a file, its old bytes kept in trash; returns the written file's stat. */
  async write(relativePath: string, text: string, hash = hashText(text)): Promise<StatSnapshot> {
    // Before anything: writeFileAtomically replaces the file a link points at, wherever it is.
    refuseLinks(this.root, relativePath)
    await this.copyToTrash(relativePath)
    this.beforeWrite(relativePath, hash)
    const file = absolute(this.root, relativePath)
    await this.folderFor(file)
    const written = await writeFileAtomically(file, text, { fsync: false, tempDir: this.tempDir })
    this.durability.note(file)
    return written
  }

  /**
   * Creates a file the plan saw absent: nothing to keep in trash, and a file that appeared
   * meanwhile is never replaced (FileAppearedError). Returns the written file's stat.
   */
  async create(relativePath: string, text: string, hash = hashText(text)): Promise<StatSnapshot> {
    refuseFolderLinks(this.root, relativePath)
    this.beforeWrite(relativePath, hash)
    const file = absolute(this.root, relativePath)
    await this.folderFor(file)
    const written = await createFileAtomically(file, text, { fsync: false, tempDir: this.tempDir })
    this.durability.note(file)
    return written
  }

  /** Folders this writer made or found, so a pull of many files asks for each folder once. */
  private readonly folders = new Map<string, Promise<unknown>>()

  private async folderFor(file: string): Promise<void> {
    const folder = path.dirname(file)
    let made = this.folders.get(folder)
    if (!made) {
      made = mkdir(folder, { recursive: true })
      this.folders.set(folder, made)
      // A failure is reported to this caller; the next write tries again.
      made.catch(() => this.folders.delete(folder))
    }
    await made
  }

  async remove(relativePath: string): Promise<void> {
    refuseLinks(this.root, relativePath)
    await this.copyToTrash(relativePath)
    this.beforeWrite(relativePath, 'deleted')
    await rm(absolute(this.root, relativePath), { force: true })
    this.durability.note(absolute(this.root, relativePath))
  }
}

/**
 * The check before a new file takes its name (claimName): only the folders above it. The name
 * itself is taken with link(), which never follows a link there and fails on anything in its
 * place (FileAppearedError), so an lstat of it would only find it absent, once per pulled file.
 */
function refuseFolderLinks(root: string, relativePath: string): void {
  const cut = relativePath.lastIndexOf('/')
  if (cut > 0) refuseLinks(root, relativePath.slice(0, cut))
}

/** .cms-sync/conflicts/<path>.remote: the server's side of a conflict, for `diff` and people. */
export function conflictCopyPath(root: string, relativePath: string): string {
  return syncDirPath(root, 'conflicts', ...`${relativePath}.remote`.split('/'))
}

/** Whether .cms-sync/conflicts/ (or a folder in it) exists: if not, no run needs to remove a copy. */
export async function hasConflictCopies(root: string, ...folder: string[]): Promise<boolean> {
  return access(syncDirPath(root, 'conflicts', ...folder)).then(
    () => true,
    () => false,
  )
}

export async function writeConflictCopy(
  root: string,
  relativePath: string,
  text: string | undefined,
): Promise<void> {
  const file = conflictCopyPath(root, relativePath)
  if (text === undefined) {
    await rm(file, { force: true })
    return
  }
  await mkdir(path.dirname(file), { recursive: true })
  await writeFileAtomically(file, text)
}

export async function removeConflictCopy(root: string, relativePath: string): Promise<void> {
  await rm(conflictCopyPath(root, relativePath), { force: true })
}
