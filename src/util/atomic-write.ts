// The one atomic writer (temp file, then rename) for every file cms-sync writes: workspace
// files on the hot path of a large pull, the state, cms-sync.yaml, credentials.yaml (mode 0600)
// and the watch daemon's request files. It sits in util/ so that config/ can use it too.
//
// Links are resolved with the native realpath (one call, where the JavaScript fs.realpath makes
// one main-thread lstat per path segment), and a temp file claimed by rename needs no unlink
// after it: on a large pull both costs add up (docs/benchmarks.md, "write-file-atomic on the
// hot path").
//
// Temp files go to `tempDir` when the caller gives one (the workspace's .cms-sync/tmp/, on the
// same file system), named `write-<pid>-<n>`: a kill -9 mid-write then leaves nothing in the
// synced folders for the scan, the watcher or git to see, and the next run under the lock
// knows them as ours by name and removes them (temp-files.ts). Without one, or where the
// rename crosses file systems (EXDEV), the temp file is the target's sibling,
// `<name>.<ten digits>`, a form the ignore rules skip. Across file systems its name is first
// recorded in the temp folder (`sibling-<pid>-<n>`, holding the temp file's path), and the record
// removed once the temp file is gone: the next run finds what a kill left from the temp folder
// alone, without reading every synced folder.
//
// Both writers return the written file's stat, taken from the open handle: the path may be
// edited again the moment it appears, and the stat cache must vouch for our bytes, not those.
// `fsync: false` leaves durability to the caller (durability.ts flushes in groups).
//
// A small file without fsync is written with synchronous calls: each costs microseconds, while
// a promise's round trip through libuv's thread pool costs a futex wake, an eventfd write and an
// epoll wake on top, four such trips per file for open, write, fstat and close
// (docs/benchmarks.md, "Small files and base blobs written with synchronous calls"). The scan's
// lstatSync does the same.
import {
  close,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fstat,
  fstatSync,
  fsync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  unlinkSync,
  writeFile as writeFileCallback,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { chmod, chown, realpath, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'

/** A file's size, mtime and inode when its hash was taken: an equal stat means equal content. */
export interface StatSnapshot {
  size: number
  mtimeMs: number
  ino: number
}

/**
 * Names `file` in a file system error that names none: writes through an open file fail
 * without a path (ENOSPC), and "disk full at an unnamed file" helps nobody. Returns the error.
 */
export function naming(error: unknown, file: string): unknown {
  const failed = error as NodeJS.ErrnoException
  if (failed instanceof Error && failed.code && failed.path === undefined) failed.path = file
  return error
}

let counter = 0

/** A ten-digit number no other write of this process uses. */
function tempSuffix(): number {
  counter = (counter + 1) % 1_000_000_000
  return 1_000_000_000 + ((process.pid * 7919 + counter) % 1_000_000_000)
}

export interface WriteOptions {
  /** fsync the file before it takes its name (default true). */
  fsync?: boolean
  /** Where the temp file is written (same file system as the target); default: beside it. */
  tempDir?: string
  /**
   * The file's permissions (0o600 for a secret): the temp file is created with them, so the
   * bytes are never readable by others, not even before the rename. Default: a replaced file's own.
   */
  mode?: number
}

/** The name of a temp file of this process in a temp folder: its pid tells a later run whether it is left over. */
export function tempName(kind: string): string {
  return `${kind}-${process.pid}-${tempSuffix()}`
}

/** The writer's own options: where the fallback across file systems records its sibling temp file. */
interface Options extends WriteOptions {
  recordIn?: string
}

/** Temp folders made so far (one mkdir per folder and process). */
const tempDirs = new Set<string>()

function tempDirReady(dir: string): void {
  if (tempDirs.has(dir)) return
  mkdirSync(dir, { recursive: true })
  tempDirs.add(dir)
}

/** Below this, and without fsync, a temp file is written with synchronous calls (see above). */
const SMALL_FILE = 256 * 1024

const isSmall = (text: string | Uint8Array, opts: WriteOptions) =>
  !(opts.fsync ?? true) && (typeof text === 'string' ? text.length * 3 : text.byteLength) < SMALL_FILE

const writeFd = promisify(writeFileCallback)
const fsyncFd = promisify(fsync)
const fstatFd = promisify(fstat)
const closeFd = promisify(close)

/**
 * Creates a temp file of our own for `target` and opens it (a metadata call, synchronous on
 * every path: it is the open of a large file's bytes that goes through the thread pool).
 */
function openTemp(
  target: string,
  mode: number | undefined,
  opts: Options,
): { temp: string; fd: number; record?: string } {
  if (opts.tempDir) tempDirReady(opts.tempDir)
  let remade = false
  for (;;) {
    const temp = opts.tempDir ? path.join(opts.tempDir, tempName('write')) : `${target}.${tempSuffix()}`
    const record = opts.recordIn === undefined ? undefined : recordSibling(opts.recordIn, temp)
    try {
      return { temp, fd: openSync(temp, 'wx', mode ?? 0o666), ...(record ? { record } : {}) }
    } catch (error) {
      if (record) rmSync(record, { force: true })
      const code = (error as NodeJS.ErrnoException).code
      // The temp folder went away since it was made (.cms-sync/ removed): made again, once.
      if (code === 'ENOENT' && opts.tempDir && !remade) {
        remade = true
        tempDirs.delete(opts.tempDir)
        tempDirReady(opts.tempDir)
        continue
      }
      if (code !== 'EEXIST') throw error
    }
  }
}

/** Notes in `dir` that `temp` is about to be made, before it is: returns the record's path. */
function recordSibling(dir: string, temp: string): string {
  tempDirReady(dir)
  const record = path.join(dir, tempName('sibling'))
  writeFileSync(record, temp, { flag: 'wx' })
  return record
}

/** The temp file is gone (renamed, linked or removed): so goes its record, if it has one. */
function dropRecord(written: { record?: string }): void {
  if (written.record) rmSync(written.record, { force: true })
}

/** Writes `text` (or bytes) to a fresh temp file for `target`; returns its name and stat, closed. */
async function writeTemp(
  target: string,
  text: string | Uint8Array,
  mode: number | undefined,
  opts: Options,
): Promise<{ temp: string; stat: StatSnapshot; record?: string }> {
  let temp = ''
  let record: string | undefined
  let fd: number | undefined
  try {
    ;({ temp, fd, record } = openTemp(target, mode, opts))
    let info: Stats
    if (isSmall(text, opts)) {
      writeFileSync(fd, text)
      info = fstatSync(fd)
      closeSync(fd)
    } else {
      await writeFd(fd, text)
      if (opts.fsync ?? true) await fsyncFd(fd)
      info = await fstatFd(fd)
      await closeFd(fd)
    }
    fd = undefined
    return {
      temp,
      stat: { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino },
      ...(record ? { record } : {}),
    }
  } catch (error) {
    if (fd !== undefined) closeSync(fd)
    if (temp) rmSync(temp, { force: true })
    if (record) rmSync(record, { force: true })
    throw naming(error, target)
  }
}

/**
 * Gives the temp file the owner of the file it replaces, where that is not us: a run as root
 * (sudo) must not leave a user's files owned by root. Free when we own the file (the usual
 * case: no call at all). Others than root may not give a file away: that refusal is no error.
 */
async function keepOwner(temp: string, was: Stats): Promise<void> {
  try {
    await chown(temp, was.uid, was.gid)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const root = process.getuid?.() === 0
    if (code === 'ENOSYS' || (!root && (code === 'EPERM' || code === 'EINVAL'))) return
    throw error
  }
}

/** Whether a replaced file belongs to someone else; never where there are no user ids (Windows). */
const ownedByOther = (was: Stats) =>
  process.getuid !== undefined && (was.uid !== process.getuid() || was.gid !== process.getgid?.())

const crossDevice = (error: unknown) => (error as NodeJS.ErrnoException).code === 'EXDEV'

export async function writeFileAtomically(
  file: string,
  text: string | Uint8Array,
  opts: Options = {},
): Promise<StatSnapshot> {
  // Through a link, the file it points at is replaced and the link kept, as editors do.
  const target = await realpath(file).catch(() => file)
  // A replaced file keeps its permissions and its owner.
  const existing = await stat(target).catch(() => undefined)
  const mode = opts.mode ?? existing?.mode
  const written = await writeTemp(target, text, mode, opts)
  try {
    // open() applies the umask; an existing file's mode is copied as it was.
    if (mode !== undefined) await chmod(written.temp, mode)
    if (existing && ownedByOther(existing)) await keepOwner(written.temp, existing)
    await rename(written.temp, target)
  } catch (error) {
    await rm(written.temp, { force: true })
    dropRecord(written)
    if (opts.tempDir && crossDevice(error))
      return writeFileAtomically(file, text, { ...opts, tempDir: undefined, recordIn: opts.tempDir })
    throw error
  }
  dropRecord(written)
  return written.stat
}

/** The path was free when the caller looked, but a file is there now: nothing was written. */
export class FileAppearedError extends Error {
  constructor(readonly file: string) {
    super(`${file} appeared while it was being written`)
  }
}

/** File systems without hard links answer link() with one of these. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK'])

/**
 * Gives a complete file (a temp file on the same file system) a name that must still be free:
 * link() fails if anything took the name meanwhile, where rename() would silently replace it.
 * One call both checks and places, so a pull of new files needs no stat and no trash check.
 * The source is gone afterwards either way; FileAppearedError when the name was taken.
 * Synchronous: three metadata calls, cheaper than three trips through the thread pool.
 */
export function claimName(source: string, file: string): void {
  try {
    linkSync(source, file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? ''
    if (code !== 'EEXIST' && NO_LINKS.has(code)) {
      // No hard links here: check, then rename (a file made in between would be replaced).
      if (!existsSync(file)) {
        renameSync(source, file)
        return
      }
    }
    rmSync(source, { force: true })
    throw code === 'EEXIST' || NO_LINKS.has(code) ? new FileAppearedError(file) : error
  }
  unlinkSync(source)
}

/** Creates a file that must not exist yet, atomically (see claimName). */
export async function createFileAtomically(
  file: string,
  text: string,
  opts: Options = {},
): Promise<StatSnapshot> {
  const written = await writeTemp(file, text, undefined, opts)
  try {
    claimName(written.temp, file)
  } catch (error) {
    // claimName removed the temp file whatever happened (an EXDEV link leaves it: removed here).
    rmSync(written.temp, { force: true })
    dropRecord(written)
    if (!(opts.tempDir && crossDevice(error))) throw error
    return createFileAtomically(file, text, { ...opts, tempDir: undefined, recordIn: opts.tempDir })
  }
  dropRecord(written)
  return written.stat
}

const sameStat = (a: StatSnapshot, b: Stats) =>
  a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino

/**
 * Replaces `file` with a copy of itself in which each patch's bytes overwrite as many bytes at
 * its offset, atomically (a temp file in `tempDir`, then rename): a large file that changes in a
 * few places is copied by the kernel instead of read and written whole. `expect` is the file
 * the patches were found in: undefined is returned, and nothing written, when the file is
 * another now (replaced since, or changed in place).
 */
export async function patchFileAtomically(
  file: string,
  patches: readonly { offset: number; bytes: Uint8Array }[],
  opts: { tempDir: string; expect: StatSnapshot },
): Promise<StatSnapshot | undefined> {
  const before = statSync(file, { throwIfNoEntry: false })
  if (before === undefined || !sameStat(opts.expect, before)) return undefined
  if (ownedByOther(before)) return patchInMemory(file, patches, opts)
  tempDirReady(opts.tempDir)
  const temp = path.join(opts.tempDir, tempName('write'))
  let fd: number | undefined
  try {
    copyFileSync(file, temp, constants.COPYFILE_EXCL)
    // Replaced between the check and the copy: the copy may be of another file.
    const copied = statSync(file, { throwIfNoEntry: false })
    if (copied === undefined || !sameStat(opts.expect, copied)) {
      rmSync(temp, { force: true })
      return undefined
    }
    fd = openSync(temp, 'r+')
    for (const patch of patches) writeSync(fd, patch.bytes, 0, patch.bytes.length, patch.offset)
    await fsyncFd(fd)
    const info = fstatSync(fd)
    closeSync(fd)
    fd = undefined
    await chmod(temp, before.mode)
    await rename(temp, file)
    return { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino }
  } catch (error) {
    if (fd !== undefined) closeSync(fd)
    rmSync(temp, { force: true })
    if (crossDevice(error)) return patchInMemory(file, patches, opts)
    throw naming(error, file)
  }
}

/** patchFileAtomically by reading the file (one owned by another user, a temp folder on another file system). */
async function patchInMemory(
  file: string,
  patches: readonly { offset: number; bytes: Uint8Array }[],
  opts: { tempDir: string; expect: StatSnapshot },
): Promise<StatSnapshot | undefined> {
  const bytes = readFileSync(file)
  const now = statSync(file, { throwIfNoEntry: false })
  if (now === undefined || !sameStat(opts.expect, now)) return undefined
  for (const patch of patches) bytes.set(patch.bytes, patch.offset)
  return writeFileAtomically(file, bytes, { tempDir: opts.tempDir })
}
