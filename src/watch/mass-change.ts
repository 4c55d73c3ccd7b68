// The watch-mode mass change guard (design.md, "Safety guards"): when many files change at once
// (a git checkout, a bulk search-and-replace, a folder dragged to the bin) the daemon stops
// pushing and waits for a person to run `cms-sync push` or `sync`. The decision is a pure
// predicate; the pause itself is a small file so the one-shot commands can lift it.

import { mkdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { type HeldChange, shellPaths } from '../engine/held.js'
import { writeFileAtomically } from '../util/atomic-write.js'

/** Below this many paths a batch is an ordinary editing session, whatever the workspace size. */
export const MASS_CHANGE_MIN_PATHS = 50
/** A batch touching more than this share of the tracked files is a checkout or a bulk rewrite. */
export const MASS_CHANGE_SHARE = 0.2
/** Deleting is what loses data on the server, so fewer deletions than changes trip the guard. */
export const MASS_DELETE_MIN_PATHS = 20
export const MASS_DELETE_SHARE = 0.1

export interface MassChangeInput {
  /** Paths in the batch (after own writes are filtered out). */
  changed: number
  /** Of those, how many were deleted. */
  deleted: number
  /** Items the workspace tracks (the state file's item count; 0 for a fresh workspace). */
  tracked: number
}

export type MassChangeDecision =
  | { pause: false; count: number }
  | { pause: true; reason: 'mass-change' | 'mass-delete'; count: number; threshold: number }

/** When the watcher pauses: more than `files`, or more than `percent` of the tracked items (either). */
export interface MassChangeThresholds {
  massChange: { files: number; percent: number }
  massDelete: { files: number; percent: number }
}

export const DEFAULT_THRESHOLDS: MassChangeThresholds = {
  massChange: { files: MASS_CHANGE_MIN_PATHS, percent: MASS_CHANGE_SHARE * 100 },
  massDelete: { files: MASS_DELETE_MIN_PATHS, percent: MASS_DELETE_SHARE * 100 },
}

/**
 * Saving two or three files at once (a file and its translation, a rename) is an edit, never a
 * mass change, however small the site: a batch pauses only above this many paths.
 */
export const MASS_CHANGE_FLOOR = 3

/** Below this many paths in a batch no workspace size makes a mass change or delete. */
export function minPausePaths(t: MassChangeThresholds = DEFAULT_THRESHOLDS): number {
  return Math.min(MASS_CHANGE_FLOOR, t.massChange.files, t.massDelete.files)
}

/**
 * The count a batch must exceed: `files`, or `percent` of the tracked items when that is
 * fewer (either trips it, as cms-sync.yaml says); the percent never below the floor (`files`
 * is the user's own number). A workspace that tracks nothing yet (the first watch) has only
 * `files`; a percent of 0 is not used.
 */
function thresholdOf(limit: { files: number; percent: number }, tracked: number): number {
  const share = tracked > 0 && limit.percent > 0 ? Math.floor((tracked * limit.percent) / 100) : Infinity
  return Math.min(limit.files, Math.max(MASS_CHANGE_FLOOR, share))
}

export function decideMassChange(
  input: MassChangeInput,
  t: MassChangeThresholds = DEFAULT_THRESHOLDS,
): MassChangeDecision {
  const deleteThreshold = thresholdOf(t.massDelete, input.tracked)
  if (input.deleted > deleteThreshold) {
    return { pause: true, reason: 'mass-delete', count: input.deleted, threshold: deleteThreshold }
  }
  const changeThreshold = thresholdOf(t.massChange, input.tracked)
  if (input.changed > changeThreshold) {
    return { pause: true, reason: 'mass-change', count: input.changed, threshold: changeThreshold }
  }
  return { pause: false, count: input.changed }
}

/** A bulk operation whose events pause longer than the watcher waits still counts as one. */
export const MASS_CHANGE_WINDOW_MS = 10_000

export interface ChangeWindow {
  /** Adds a batch; returns the counts over the window, for decideMassChange. */
  add(paths: Iterable<string>, deleted: ReadonlySet<string>): Omit<MassChangeInput, 'tracked'>
  /** After a pause is set (or lifted), start counting afresh. */
  clear(): void
}

/**
 * Distinct paths changed over the last few seconds, across batches, so the guard also sees a bulk
 * operation that reached the daemon in slices (each slice alone may look harmless). The same file
 * saved again and again counts once.
 */
export function createChangeWindow(
  windowMs = MASS_CHANGE_WINDOW_MS,
  now: () => number = Date.now,
): ChangeWindow {
  const seen = new Map<string, { at: number; deleted: boolean }>()
  return {
    add(paths, deleted) {
      const at = now()
      for (const [p, entry] of seen) if (at - entry.at >= windowMs) seen.delete(p)
      for (const p of paths) seen.set(p, { at, deleted: deleted.has(p) })
      let deletedCount = 0
      for (const entry of seen.values()) if (entry.deleted) deletedCount += 1
      return { changed: seen.size, deleted: deletedCount }
    },
    clear() {
      seen.clear()
    },
  }
}

export const PAUSE_FILE = path.join('.cms-sync', 'watch-paused.json')
/** How many paths the pause file keeps, so a person can see what happened without a huge file. */
const SAMPLE_PATHS = 20

export interface PauseInfo {
  /** ISO time the daemon paused. */
  since: string
  reason: 'mass-change' | 'mass-delete' | 'branch-switch' | 'unreadable-pause-file' | (string & {})
  count: number
  samplePaths: string[]
  /** A branch switch: the branch the workspace now has checked out, and the one before. */
  branch?: string
  fromBranch?: string
}

/** The pause a branch switch makes, whatever its size: the other branch's files are not edits. */
export function pauseForBranchSwitch(
  git: { from?: string; to?: string },
  paths: Iterable<string>,
): PauseInfo {
  const sorted = [...paths].sort()
  return {
    since: new Date().toISOString(),
    reason: 'branch-switch',
    count: sorted.length,
    samplePaths: sorted.slice(0, SAMPLE_PATHS),
    ...(git.to ? { branch: git.to } : {}),
    ...(git.from ? { fromBranch: git.from } : {}),
  }
}

export function pauseInfoFor(
  decision: MassChangeDecision & { pause: true },
  paths: Iterable<string>,
): PauseInfo {
  return {
    since: new Date().toISOString(),
    reason: decision.reason,
    count: decision.count,
    samplePaths: [...paths].sort().slice(0, SAMPLE_PATHS),
  }
}

/** The current pause, or undefined. A pause file that cannot be parsed still counts as a pause. */
export async function readPause(root: string): Promise<PauseInfo | undefined> {
  let text: string
  try {
    text = await readFile(path.join(root, PAUSE_FILE), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const parsed = JSON.parse(text) as Partial<PauseInfo>
    if (typeof parsed.since === 'string' && typeof parsed.reason === 'string') {
      return {
        since: parsed.since,
        reason: parsed.reason,
        count: typeof parsed.count === 'number' ? parsed.count : 0,
        samplePaths: Array.isArray(parsed.samplePaths) ? parsed.samplePaths.map(String) : [],
        ...(typeof parsed.branch === 'string' ? { branch: parsed.branch } : {}),
        ...(typeof parsed.fromBranch === 'string' ? { fromBranch: parsed.fromBranch } : {}),
      }
    }
  } catch {
    // fall through: failing open here would let a half-written file resume pushing a checkout
  }
  return { since: new Date(0).toISOString(), reason: 'unreadable-pause-file', count: 0, samplePaths: [] }
}

export async function setPause(root: string, info: PauseInfo): Promise<void> {
  const file = path.join(root, PAUSE_FILE)
  await mkdir(path.dirname(file), { recursive: true })
  await writeFileAtomically(file, `${JSON.stringify(info, null, 2)}\n`)
}

/** Lifted by an explicit `cms-sync push` or `sync`; absent is fine. */
export async function clearPause(root: string): Promise<void> {
  await rm(path.join(root, PAUSE_FILE), { force: true })
}

/** The exact commands that lift a pause, for the daemon's line, `status` and `doctor`. */
export const PAUSE_LIFT =
  'to push them, stop `cms-sync watch` (Ctrl-C), run `cms-sync push` (which lifts the pause) and start watch again; to drop them instead, `cms-sync restore <paths>` (works while watch runs)'

/** One line on a pause: when, why, a few of the paths. */
export function describePause(info: PauseInfo): string {
  if (info.reason === 'unreadable-pause-file') return `watch is paused (${PAUSE_FILE} cannot be read)`
  if (info.reason === 'branch-switch') {
    const from = info.fromBranch ? ` from \`${info.fromBranch}\`` : ''
    const sample = info.samplePaths.slice(0, 3).join(', ')
    return `watch paused pushing at ${info.since}: git switched the workspace to branch \`${info.branch ?? '(unknown)'}\`${from}, which changed ${info.count} file${info.count === 1 ? '' : 's'}${sample ? ` (${sample}${info.count > 3 ? ', ...' : ''})` : ''}; that branch's files are not pushed as edits`
  }
  const what = info.reason === 'mass-delete' ? 'deleted' : 'changed'
  const sample = info.samplePaths.slice(0, 3).join(', ')
  const more = info.count > 3 ? ', ...' : ''
  return `watch paused pushing at ${info.since}: ${info.count} files ${what} at once${sample ? ` (${sample}${more})` : ''}`
}

/**
 * The pause as a held change (held.ts), for `status`, `doctor` and watch's events. `pushing`:
 * the paths it holds now, when known (status plans them); else the ones it saw.
 */
export function heldByPause(info: PauseInfo, pushing?: readonly string[]): HeldChange {
  const paths = [...(pushing ?? info.samplePaths)].sort()
  const guard =
    info.reason === 'mass-delete'
      ? 'mass-delete'
      : info.reason === 'branch-switch'
        ? 'branch-switch'
        : 'mass-change'
  return {
    guard,
    side: 'local',
    action: 'push',
    paths,
    count: pushing ? paths.length : Math.max(info.count, paths.length),
    reason: describePause(info),
    release:
      'stop `cms-sync watch` (Ctrl-C), run `cms-sync push` (which lifts the pause) and start watch again',
    // A branch switch is undone by switching back; anything else by restoring the files.
    drop:
      guard === 'branch-switch' && info.fromBranch
        ? `git checkout ${shellPaths([info.fromBranch])}`
        : `cms-sync restore ${paths.length > 0 ? shellPaths(paths) : '<paths>'}`,
    since: info.since,
  }
}
