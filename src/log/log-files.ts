// The workspace's log files: .cms-sync/logs/cms-sync.log is always the current one (`tail -f`
// it); the first run of a new day moves the previous day's aside as cms-sync-<date>.log, and
// those are deleted once older than the retention (cms-sync.yaml retention.logsDays), looked at
// whenever a log is moved aside (the first run of a day). Age is the file's mtime: a log still
// written to (a watch started days ago) is never old.

import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import path from 'node:path'

export const LOG_FILE = 'cms-sync.log'
/** A log moved aside: cms-sync-2026-11-25.log, or cms-sync-2026-11-25.2.log for a second one. */
const ROTATED = /^cms-sync-\d{4}-\d{2}-\d{2}(\.\d+)?\.log$/
export const DEFAULT_LOGS_DAYS = 14
const DAY_MS = 24 * 60 * 60 * 1000

export function logsDir(root: string): string {
  return path.join(root, '.cms-sync', 'logs')
}

export function logFilePath(root: string): string {
  return path.join(logsDir(root), LOG_FILE)
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/**
 * Moves a current log last written on an earlier (UTC) day aside, named for that day; true when
 * it did. Two processes starting at once may both try: the second finds the file gone or a fresh
 * one, and a rotated name is never overwritten.
 */
export function rotateLog(root: string, now = Date.now()): boolean {
  const file = logFilePath(root)
  let mtimeMs: number
  try {
    mtimeMs = statSync(file).mtimeMs
  } catch {
    return false // no log yet
  }
  const day = utcDay(mtimeMs)
  if (day === utcDay(now)) return false
  let target = path.join(logsDir(root), `cms-sync-${day}.log`)
  for (let n = 2; existsSync(target); n++) target = path.join(logsDir(root), `cms-sync-${day}.${n}.log`)
  try {
    renameSync(file, target)
    return true
  } catch {
    // Moved by a process that started at the same moment: nothing left to do.
    return false
  }
}

/** Deletes the logs moved aside whose last write is more than `days` days ago; returns their names. */
export function pruneLogs(root: string, days: number, now = Date.now()): string[] {
  const cutoff = now - days * DAY_MS
  const removed: string[] = []
  let names: string[]
  try {
    names = readdirSync(logsDir(root))
  } catch {
    return removed
  }
  for (const name of names) {
    if (!ROTATED.test(name)) continue
    const file = path.join(logsDir(root), name)
    try {
      if (statSync(file).mtimeMs >= cutoff) continue
      rmSync(file, { force: true })
      removed.push(name)
    } catch {
      // Gone meanwhile, or not ours to delete: the next run tries again.
    }
  }
  return removed
}
