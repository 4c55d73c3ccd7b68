// One cms-sync process at a time per workspace (exit 5 otherwise). proper-lockfile keeps the
// lock fresh while we run; who holds it (pid, command, since) sits next to it so the refusal can
// name the holder, and a lock whose holder is gone (killed with SIGKILL) is taken over at once
// instead of after the stale timeout. A process killed between taking the lock and naming
// itself leaves a lock with no holder: every process first writes a candidate file
// (lock.<pid>.pid), so such a lock is taken over at once when no candidate is alive either.
//
// proper-lockfile loads signal-exit, whose SIGINT/SIGTERM handler re-raises the signal when it is
// the only listener left. main.ts keeps its own listeners for the whole life of the process, so a
// daemon that shut down cleanly still exits 0.

import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import lockfile from 'proper-lockfile'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import { writeFileAtomically } from '../util/atomic-write.js'
import { processIsAlive } from '../util/process-alive.js'
import { syncDirPath } from '../workspace/layout.js'

// proper-lockfile takes over a lock whose heartbeat (the lock folder's mtime, refreshed every
// HEARTBEAT_MS) is older than its `stale`, without asking whether its holder lives. With 10 s, a
// holder stopped for 12 s (SIGSTOP, Ctrl-Z, a debugger) lost its lock to a second process and
// both wrote. A lock is now taken over only when its holder is provably gone: its pid is not
// alive (or is another process's now, started after the lock was taken). The heartbeat alone
// decides only after a week, far longer than any pause, for a lock nobody can be named for.
// So the heartbeat need not beat often: against a week, every 10 minutes is as good as every 5 s,
// and a daemon that idles for hours no longer stats and touches the lock 12 times a minute.
const STALE_MS = 7 * 24 * 60 * 60 * 1000
const HEARTBEAT_MS = 10 * 60_000

export interface LockHolder {
  pid: number
  /** The command that holds it (`watch`, `push`, ...); absent in locks of older versions. */
  command?: string
  /** ISO time it was taken. */
  since?: string
}

/** The holder as recorded in lock.pid: JSON, or a bare pid (older versions). */
export async function readLockHolder(root: string): Promise<LockHolder | undefined> {
  const text = (await readFile(syncDirPath(root, 'lock.pid'), 'utf8').catch(() => '')).trim()
  let parsed: Partial<LockHolder> = {}
  try {
    const value: unknown = JSON.parse(text)
    parsed = typeof value === 'number' ? { pid: value } : (value as Partial<LockHolder>)
  } catch {
    // not ours, or torn: no holder to name
  }
  if (!Number.isInteger(parsed?.pid) || (parsed.pid as number) <= 0) return undefined
  return {
    pid: parsed.pid as number,
    ...(typeof parsed.command === 'string' ? { command: parsed.command } : {}),
    ...(typeof parsed.since === 'string' ? { since: parsed.since } : {}),
  }
}

export function describeHolder(holder: LockHolder | undefined): string {
  if (holder === undefined) return 'another cms-sync process'
  const what = holder.command ? `\`cms-sync ${holder.command}\`` : 'cms-sync'
  return `${what} (pid ${holder.pid}${holder.since ? `, since ${holder.since}` : ''})`
}

/** Commands whose work a running `watch` already does. */
const WATCH_DOES = new Set(['push', 'pull', 'sync'])

/**
 * The holder and what to do about it. A one-shot run refused because `watch` holds the lock is
 * told that watch already does its work (the usual case: nothing to do), and how to stop watch
 * when the run is wanted anyway (to lift a pause, or with --prefer).
 */
function refusal(holder: LockHolder | undefined, command: string | undefined): string {
  const who = describeHolder(holder)
  if (holder?.command !== 'watch') return `${who}; wait for it to finish`
  const stop = `stop it first (Ctrl-C in its terminal, or \`kill ${holder.pid}\`)`
  if (command === 'watch') return `${who}, which already watches this workspace; to start another, ${stop}`
  if (command !== undefined && WATCH_DOES.has(command))
    return `${who}, which already pushes local edits and pulls server changes as they happen (\`cms-sync status\` shows what is left); to run \`cms-sync ${command}\` yourself, ${stop}`
  return `${who}; ${stop}`
}

/** The live cms-sync process holding the workspace lock, if any (for `doctor`). */
export async function lockHolder(root: string): Promise<LockHolder | undefined> {
  const holder = await readLockHolder(root)
  return holder !== undefined && processIsAlive(holder.pid, holder.since) ? holder : undefined
}

async function tryLock(root: string): Promise<() => Promise<void>> {
  return lockfile.lock(syncDirPath(root), {
    lockfilePath: syncDirPath(root, 'lock'),
    stale: STALE_MS,
    update: HEARTBEAT_MS,
    retries: 0,
    realpath: false,
    // If our own lock is taken away (clock jump, removed folder), stop writing rather than crash.
    onCompromised: () => {},
  })
}

const CANDIDATE = /^lock\.(\d+)\.pid$/

/** Whether a process that may hold the lock without naming itself yet is alive (not us). */
async function liveCandidate(root: string): Promise<boolean> {
  const names = await readdir(syncDirPath(root)).catch(() => [] as string[])
  return names.some((name) => {
    const pid = Number(CANDIDATE.exec(name)?.[1])
    return pid > 0 && pid !== process.pid && processIsAlive(pid)
  })
}

/** Takes the workspace lock for `command`; resolves to the function that releases it. */
export async function acquireLock(root: string, command?: string): Promise<() => Promise<void>> {
  await mkdir(syncDirPath(root), { recursive: true })
  const candidate = syncDirPath(root, `lock.${process.pid}.pid`)
  await writeFile(candidate, `${process.pid}\n`)
  try {
    return await lockAndName(root, command)
  } finally {
    await rm(candidate, { force: true })
  }
}

async function lockAndName(root: string, command?: string): Promise<() => Promise<void>> {
  let release: () => Promise<void>
  try {
    release = await tryLock(root)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error
    const holder = await readLockHolder(root)
    const alive =
      holder === undefined
        ? await liveCandidate(root)
        : holder.pid === process.pid || processIsAlive(holder.pid, holder.since)
    if (alive) throw new CliError(`the workspace is locked by ${refusal(holder, command)}`, ExitCode.locked)
    // The holder died without releasing: its lock protects nothing any more.
    await rm(syncDirPath(root, 'lock'), { recursive: true, force: true })
    release = await tryLock(root)
  }
  const holder: LockHolder = {
    pid: process.pid,
    ...(command ? { command } : {}),
    since: new Date().toISOString(),
  }
  await writeFileAtomically(syncDirPath(root, 'lock.pid'), `${JSON.stringify(holder)}\n`)
  return async () => {
    await rm(syncDirPath(root, 'lock.pid'), { force: true })
    await release()
  }
}
