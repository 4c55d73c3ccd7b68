// Workspace files are made durable in groups, not with one fsync each. What must never happen
// is a state file that records a file the disk may not hold after a power cut (the next run
// would read the empty file as a local edit). So the state store asks for a flush before each
// save, and a flush makes every change noted since the last one durable at once: one syncfs of
// the workspace's file system (coreutils `sync -f`), which costs about what a single fsync
// does, where an fsync per file made a large pull several times slower than writing the
// files (docs/benchmarks.md, "Figures behind code comments"). Where `sync -f` is missing (macOS, busybox without it), each noted file is fsynced.
// A kill -9 of cms-sync loses nothing either way: written data is in the kernel already.

import { execFile } from 'node:child_process'
import { open } from 'node:fs/promises'
import { inParallel } from '../util/in-parallel.js'

/** False once `sync` turned out to be missing here; asked again only then. */
let haveSync = true

/**
 * What `sync` is given: PATH to be found by, and no token, no connection secret, nothing else of
 * the environment (no program cms-sync starts holds a secret).
 */
function syncEnv(): NodeJS.ProcessEnv {
  return process.env.PATH === undefined ? {} : { PATH: process.env.PATH }
}

/** syncfs(2) of the file system holding `dir`; false when it could not be done this way. */
function syncfs(dir: string): Promise<boolean> {
  // Windows has no coreutils `sync`, and looks for a bare program name in the working folder
  // first: a `sync.exe` committed to the checkout would run there.
  if (!haveSync || process.platform === 'win32') return Promise.resolve(false)
  return new Promise((resolve) => {
    execFile('sync', ['-f', dir], { timeout: 120_000, env: syncEnv() }, (error) => {
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') haveSync = false
      resolve(!error)
    })
  })
}

async function fsyncFile(file: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined
  try {
    // Opened for writing where it may be: Windows refuses to flush a read-only handle (EPERM).
    // A file the user made read-only can still be flushed through one on POSIX systems.
    handle = await open(file, 'r+').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EACCES' || error.code === 'EPERM') return open(file, 'r')
      throw error
    })
    await handle.sync()
  } catch (error) {
    // Moved away or deleted since: whatever replaced it was noted on its own.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  } finally {
    await handle?.close()
  }
}

export class Durability {
  private noted = new Set<string>()

  /** @param root the workspace: `sync -f` flushes the file system it is on. */
  constructor(readonly root: string) {}

  /** A file written, moved or deleted under the workspace: flushed by the next flush(). */
  note(file: string): void {
    this.noted.add(file)
  }

  get pending(): number {
    return this.noted.size
  }

  /** Makes every noted change durable; resolves at once when nothing was noted. */
  async flush(): Promise<void> {
    if (this.noted.size === 0) return
    const files = [...this.noted]
    this.noted = new Set()
    if (await syncfs(this.root)) return
    await inParallel(files, 16, fsyncFile)
  }
}
