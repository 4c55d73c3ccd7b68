// One cms-sync process at a time per workspace (exit 5 otherwise). proper-lockfile keeps the
// lock fresh while we run; the holder's pid sits next to it so the message can name it, and
// a lock whose holder is gone (killed with SIGKILL) is taken over at once instead of after
// the stale timeout.

import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import lockfile from 'proper-lockfile'
import { CliError, ExitCode } from '../cli/exit-codes.js'
import { syncDirPath } from '../workspace/layout.js'

const STALE_MS = 10_000

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function holderPid(root: string): Promise<number | undefined> {
  const text = await readFile(syncDirPath(root, 'lock.pid'), 'utf8').catch(() => '')
  const pid = Number.parseInt(text, 10)
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

/** The pid of a live cms-sync process holding the workspace lock, if any (for `doctor`). */
export async function lockHolder(root: string): Promise<number | undefined> {
  const pid = await holderPid(root)
  return pid !== undefined && processIsAlive(pid) ? pid : undefined
}

async function tryLock(root: string): Promise<() => Promise<void>> {
  return lockfile.lock(syncDirPath(root), {
    lockfilePath: syncDirPath(root, 'lock'),
    stale: STALE_MS,
    retries: 0,
    realpath: false,
    // If our own lock is taken away (clock jump, removed folder), stop writing rather than crash.
    onCompromised: () => {},
  })
}

/** Takes the workspace lock; resolves to the function that releases it. */
export async function acquireLock(root: string): Promise<() => Promise<void>> {
  await mkdir(syncDirPath(root), { recursive: true })
  let release: () => Promise<void>
  try {
    release = await tryLock(root)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error
    const pid = await holderPid(root)
    if (pid === undefined || pid === process.pid || processIsAlive(pid)) {
      const holder = pid === undefined ? 'another cms-sync process' : `cms-sync process ${pid}`
      throw new CliError(`the workspace is locked by ${holder}; wait for it to finish`, ExitCode.locked)
    }
    // The holder died without releasing: its lock protects nothing any more.
    await rm(syncDirPath(root, 'lock'), { recursive: true, force: true })
    release = await tryLock(root)
  }
  await writeFile(syncDirPath(root, 'lock.pid'), `${process.pid}\n`)
  return async () => {
    await rm(syncDirPath(root, 'lock.pid'), { force: true })
    await release()
  }
}
