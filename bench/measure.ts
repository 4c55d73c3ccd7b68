// Measuring a child process the way a user runs it: wall time from spawn to exit, and its peak
// resident memory (GNU time's "maximum resident set size" when /usr/bin/time exists, else the
// VmHWM of /proc/<pid>/status polled until the process ends).

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'

export interface ChildRun {
  wallMs: number
  /** Peak resident set size in MB; NaN when it could not be read. */
  peakRssMb: number
  /** User + system CPU seconds (GNU time); NaN without it. Steadier than wall time on a busy machine. */
  cpuSec: number
  exitCode: number
  stdout: string
  stderr: string
}

const GNU_TIME = '/usr/bin/time'
const hasGnuTime = existsSync(GNU_TIME)
let runCounter = 0

async function pollHwm(pid: number, until: Promise<unknown>): Promise<number> {
  let peakKb = Number.NaN
  let done = false
  void until.then(() => {
    done = true
  })
  while (!done) {
    try {
      const status = await readFile(`/proc/${pid}/status`, 'utf8')
      const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1])
      if (kb > 0) peakKb = Number.isNaN(peakKb) ? kb : Math.max(peakKb, kb)
    } catch {
      // Gone between polls: the last reading stands.
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return peakKb / 1024
}

export async function runChild(
  command: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; okCodes?: number[] },
): Promise<ChildRun> {
  const timeFile = path.join(tmpdir(), `cms-sync-bench-time-${process.pid}-${++runCounter}`)
  const [cmd, argv] = hasGnuTime
    ? [GNU_TIME, ['-f', '%M %U %S', '-o', timeFile, command, ...args]]
    : [command, args]
  const start = performance.now()
  const child = spawn(cmd, argv, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk)
  })
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk)
  })
  const exited = new Promise<number>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve(code ?? 1))
  })
  const polled = hasGnuTime ? undefined : pollHwm(child.pid!, exited)
  const exitCode = await exited
  const wallMs = performance.now() - start
  let peakRssMb = Number.NaN
  let cpuSec = Number.NaN
  if (hasGnuTime) {
    const text = await readFile(timeFile, 'utf8').catch(() => '')
    // The last line is the figures; GNU time puts "Command exited with non-zero status" above it.
    const [rssKb, user, system] = (text.trim().split('\n').pop() ?? '').split(' ').map(Number)
    peakRssMb = (rssKb ?? Number.NaN) / 1024
    cpuSec = (user ?? Number.NaN) + (system ?? Number.NaN)
    await rm(timeFile, { force: true })
  } else peakRssMb = await polled!
  if (!(opts.okCodes ?? [0]).includes(exitCode))
    throw new Error(
      `${command} ${args.join(' ')} exited with ${exitCode}: ${stderr.slice(-2000)}${stdout.slice(-2000)}`,
    )
  return { wallMs, peakRssMb, cpuSec, exitCode, stdout, stderr }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/** The path of the built CLI: the bench measures what users run, not the TypeScript sources. */
export const CLI = path.resolve(import.meta.dirname, '..', 'dist', 'cli', 'main.js')
