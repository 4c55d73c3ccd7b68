// Whether a process still runs: the lock's holder, the writer of a temp file, an emulator's
// data folder. One check for all three, so none forgets the case of a reused pid.

import { readFileSync } from 'node:fs'

/**
 * Whether `pid` runs; with `since` (ISO time), also that it started before then, so a pid the
 * system gave to a newer process does not pass for the one that left the trace.
 */
export function processIsAlive(pid: number, since?: string): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  // A pid in use by a process that started after `since` is not the one meant (pid reuse).
  const started = processStartMs(pid)
  const taken = since === undefined ? Number.NaN : Date.parse(since)
  return !(started !== undefined && Number.isFinite(taken) && started > taken + 2_000)
}

/** When the process started (Linux /proc), in ms since the epoch; undefined where unknown. */
function processStartMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Field 22 (starttime, clock ticks after boot), counted after the command's closing paren.
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
    const boot = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1])
    if (!Number.isFinite(ticks) || !Number.isFinite(boot)) return undefined
    return boot * 1000 + (ticks / 100) * 1000
  } catch {
    return undefined
  }
}
