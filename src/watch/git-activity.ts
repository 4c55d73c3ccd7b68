// What git is doing in the repository that holds the workspace, read from its files: whether
// it holds its index lock (a checkout, a stash, a reset, a merge is under way) and where HEAD
// points. The watcher makes the files a git operation writes one batch that waits until git is
// done, and a branch switch a pause that names the branch (local-changes.ts, daemon.ts).
//
// Nothing is executed: git's own configuration can run programs (fsmonitor, hooks), and a
// workspace may be a stranger's clone. Only `.git` (a folder, or a file that names one, as in
// a worktree or a submodule), `HEAD`, `commondir`, the ref HEAD names and `packed-refs` are
// read, each at most a few kilobytes (packed-refs a few megabytes), never through a link.

import { closeSync, existsSync, fstatSync, lstatSync, openSync, readSync, type Stats, watch } from 'node:fs'
import path from 'node:path'

export interface GitHead {
  /** The ref HEAD names (`refs/heads/main`), or undefined when it is detached. */
  ref?: string
  /** The commit HEAD points at, when it can be read. */
  commit?: string
}

export interface GitActivity {
  /** The repository's git folder (for the worktree the workspace is in). */
  readonly gitDir: string
  /** Whether git holds its index lock now. */
  busy(): boolean
  /** Where HEAD points now. */
  head(): GitHead
  /** Calls `onChange` when something in the git folder changes (HEAD, the index lock); undefined if it cannot. */
  watch(onChange: (name: string) => void): { close(): void } | undefined
}

const SMALL = 4096
const PACKED_REFS_MAX = 8 * 1024 * 1024

/** The text of a regular file (never a link), at most `max` bytes; undefined when it is not one. */
function readSmall(file: string, max = SMALL): string | undefined {
  let fd: number | undefined
  try {
    const stat: Stats = lstatSync(file)
    if (!stat.isFile() || stat.size > max) return undefined
    fd = openSync(file, 'r')
    if (!fstatSync(fd).isFile()) return undefined
    const buffer = Buffer.alloc(Math.min(stat.size, max))
    const read = readSync(fd, buffer, 0, buffer.length, 0)
    return buffer.subarray(0, read).toString('utf8')
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

function isDirectory(p: string): boolean {
  try {
    return lstatSync(p).isDirectory()
  } catch {
    return false
  }
}

/** The git folder of the repository holding `root`, looked for upwards; undefined outside git. */
export function findGitDir(root: string): { gitDir: string; commonDir: string } | undefined {
  for (let dir = path.resolve(root); ; ) {
    const dotGit = path.join(dir, '.git')
    let gitDir: string | undefined
    if (isDirectory(dotGit)) gitDir = dotGit
    else {
      const text = readSmall(dotGit)
      const named = text?.match(/^gitdir: *(.+?)\s*$/m)?.[1]
      if (named) gitDir = path.resolve(dir, named)
    }
    if (gitDir !== undefined && isDirectory(gitDir) && readSmall(path.join(gitDir, 'HEAD')) !== undefined) {
      const common = readSmall(path.join(gitDir, 'commondir'))?.trim()
      const commonDir = common ? path.resolve(gitDir, common) : gitDir
      return { gitDir, commonDir: isDirectory(commonDir) ? commonDir : gitDir }
    }
    const parent = path.dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/
/** A ref as git names them: no `..`, no leading `/`, nothing that leaves the git folder. */
const REF = /^refs\/[\w\-./+@]+$/

function commitOf(commonDir: string, ref: string): string | undefined {
  if (!REF.test(ref) || ref.includes('..')) return undefined
  const loose = readSmall(path.join(commonDir, ...ref.split('/')))?.trim()
  if (loose && SHA.test(loose)) return loose
  const packed = readSmall(path.join(commonDir, 'packed-refs'), PACKED_REFS_MAX)
  if (!packed) return undefined
  for (const line of packed.split('\n')) {
    const space = line.indexOf(' ')
    if (space > 0 && line.slice(space + 1).trim() === ref) {
      const sha = line.slice(0, space)
      if (SHA.test(sha)) return sha
    }
  }
  return undefined
}

export function gitActivity(root: string): GitActivity | undefined {
  const found = findGitDir(root)
  if (!found) return undefined
  const { gitDir, commonDir } = found
  const lock = path.join(gitDir, 'index.lock')
  return {
    gitDir,
    busy: () => existsSync(lock),
    head() {
      const text = readSmall(path.join(gitDir, 'HEAD'))?.trim()
      if (!text) return {}
      const ref = text.match(/^ref: *(\S+)$/)?.[1]
      if (ref === undefined) return SHA.test(text) ? { commit: text } : {}
      const commit = commitOf(commonDir, ref)
      return commit ? { ref, commit } : { ref }
    },
    watch(onChange) {
      try {
        const watcher = watch(gitDir, { persistent: false }, (_event, name) =>
          onChange(name === null ? '' : String(name)),
        )
        watcher.on('error', () => {}) // the lock and HEAD are still read at each batch
        return watcher
      } catch {
        return undefined
      }
    },
  }
}

/** The branch a ref names (`refs/heads/main` -> `main`), or the short commit when detached. */
export function branchName(head: GitHead): string | undefined {
  if (head.ref !== undefined) return head.ref.replace(/^refs\/heads\//, '')
  return head.commit?.slice(0, 12)
}

/** HEAD names another branch (or another detached commit): a switch, not a commit on the same one. */
export function switched(before: GitHead, after: GitHead): boolean {
  if (before.ref !== after.ref) return true
  return before.ref === undefined && before.commit !== after.commit
}
