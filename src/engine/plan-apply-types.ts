// The types a run passes between its two calls, planRun then applyRun (plan-and-apply.ts), and
// what the modules around it (outcome, predict, plan-edits, media) read of them. Kept apart from
// plan-and-apply.ts so those modules depend on the shape of a run, not on the code that makes
// one: no import cycle.

import type { MediaApi } from '../remote/media.js'
import type { BaseStore } from '../state/base-store.js'
import type { StateStore, Target } from '../state/state-file.js'
import type { Codec } from '../workspace/codec.js'
import type { Kind } from '../workspace/kinds.js'
import type { BeforeLocalWrite } from '../workspace/local-writes.js'
import type { LocalEntry, ScanProblem } from '../workspace/scan.js'
import type { StrayFile } from '../workspace/stray-files.js'
import type { MediaRun } from './media/media-snapshot.js'
import type { BaseFallback, PlannedMerge } from './merges.js'
import type { Plan, PlanItem } from './plan.js'
import type { Publishing } from './publish-plan.js'
import type { EngineLogger, RemotePort } from './remote-port.js'
import type { ListedKind, RemoteEntry, RemoteSnapshot } from './remote-snapshot.js'

export interface EngineDeps {
  root: string
  target: Target
  client: RemotePort
  logger: EngineLogger
  codecs: readonly Codec[]
  maxDeletePercent: number
  /** More deletions of one kind than this in one run stop it too, whatever their share. */
  maxDeletes?: number
  /** Called before each workspace file the run writes or deletes (the watcher skips its echo). */
  beforeLocalWrite?: BeforeLocalWrite
  /** Set when media are synced (docs/media.md). */
  media?: MediaDeps
  /** Where a base's text comes from when .cms-sync/bases/ lacks it (a fresh clone: git). */
  baseFallback?: BaseFallback
  /**
   * auto (the default): a change of a content item's `isPublished` is carried out with the
   * server's publish or unpublish, and a write of an item that stays published deploys it again,
   * as the CMS's editor does. manual: no deployment at all, `isPublished` is a plain field
   * (publish-plan.ts).
   */
  publishing?: Publishing
  /** Why baseFallback found nothing, when the user can change it (a shallow clone's history). */
  whyNoBase?: () => Promise<string | undefined>
}

export interface MediaDeps {
  api: MediaApi
  /** Download every media file whose server bytes cannot be known unchanged from the listing. */
  checksum: boolean
  /** Transfers at a time. */
  concurrency: number
  /**
   * Whether a commit of the media path held exactly these bytes (a file the server's copy was
   * downloaded to): a base from cms-sync.lock is trusted for an overwrite or delete only then.
   */
  history?: (relativePath: string, file: string) => Promise<boolean>
  /**
   * Ids whose server bytes the next full run reads again whatever the listing says (watch's
   * verifier found other bytes there); the run takes them out.
   */
  recheck?: Set<string>
}

export interface PlannedRun {
  store: StateStore
  plan: Plan
  local: Map<string, LocalEntry>
  remote: Map<string, RemoteEntry>
  scanProblems: ScanProblem[]
  remoteProblems: RemoteSnapshot['problems']
  /** Files in the kind folders a full scan found that no run reads (a subfolder, not .json). */
  strays?: StrayFile[]
  /** True when --rebind dropped a base bound to another target. */
  rebound: boolean
  /** The media side of the run, when media are synced; its items are in `plan` too. */
  media?: MediaRun
  /**
   * An edit-only run (src/engine/plan-edits.ts): `local` and `remote` hold only the paths it
   * planned, each server item read by id just before the plan, so the executor need not read
   * it again before writing.
   */
  fresh?: true
  /** The items changed on both sides that merged (action `merge`), by path. */
  merges: Map<string, PlannedMerge>
  /** The base texts: read for merges, written as bases are committed. */
  bases: BaseStore
  /**
   * The listings read in full whose validators the run records at its end if the bases then
   * equal them (remote-snapshot.ts, plan-and-apply.ts recordValidators).
   */
  validators?: {
    listed: ReadonlyMap<Kind, ListedKind>
    /** How many times the media validator was dropped when the media listing was asked for. */
    mediaDrops?: number
    /** The media listing was found to be the media bases before planning (unchanged-run.ts). */
    mediaIsBases?: true
  }
}

/**
 * Which side a `merge` writes: both (sync, resolve, watch), or one half: pull writes the file
 * (the base becomes the server copy, so the local edits are still to push) and push writes the
 * server (the base becomes the file, so the server's edits are still to pull).
 */
export type MergeWrites = 'both' | 'local' | 'remote'

/** The plan entries each command carries out: one plan, different subsets. */
export const SELECT = {
  pull: (item: PlanItem) =>
    ['pull', 'delete-local', 'merge', 'merge-base', 'conflict', 'none'].includes(item.action),
  push: (item: PlanItem) =>
    ['push', 'delete-remote', 'merge', 'merge-base', 'conflict', 'none', 'publish', 'unpublish'].includes(
      item.action,
    ),
  sync: (_item: PlanItem) => true,
  /** resolve: only the conflicts that --keep just settled. */
  resolve: (item: PlanItem) => item.settledFor !== undefined,
} as const

export interface ApplyOptions {
  /** Which plan entries this command carries out (it always sees the whole plan). */
  select: (item: PlanItem) => boolean
  scope: readonly string[]
  dryRun: boolean
  allowDeletes: boolean
  /**
   * A guard that trips holds the entries it is about (Outcome.held) and the run carries out the
   * rest, instead of stopping it whole (watch: one guard never freezes the daemon).
   */
  holdGuarded?: boolean
  /** Also report files that cannot stand for an item (commands that push). */
  reportScanProblems: boolean
  /** Also report server items that cannot be mirrored (commands that pull). */
  reportRemoteProblems: boolean
  onProgress?: (done: number, total: number, item: PlanItem) => void
  /** Stops the run between items (watch shutdown, Ctrl-C); the outcome then says what was left. */
  signal?: AbortSignal
  /** The caller saves the state later (watch's edit-only runs); by default it is saved at the end. */
  deferSave?: boolean
  /** Which side a `merge` writes (default both). */
  mergeWrites?: MergeWrites
  /**
   * Whether a publish after this run's write of `path` waits (watch: the item's saves have not
   * paused yet); a publish held back stays owed in the state for a later run.
   */
  deferPublish?: (path: string) => boolean
  now?: () => string
}

/** Workspace-relative paths (or folders, or patterns) the user named; none means everything. */
export function inScope(path: string, scope: readonly string[]): boolean {
  return (
    scope.length === 0 ||
    scope.some(
      (p) =>
        p === '' ||
        p === path ||
        path.startsWith(p.endsWith('/') ? p : `${p}/`) ||
        (isPattern(p) && patternOf(p).test(path)),
    )
  )
}

/** A scope entry with `*` or `?` is a pattern (quoted on the command line, or from the page). */
function isPattern(entry: string): boolean {
  return entry.includes('*') || entry.includes('?')
}

const patterns = new Map<string, RegExp>()

/**
 * `*` and `?` within one path segment, `**` across segments; what the pattern matches whole is
 * in scope, and so is everything under a folder it matches (`content/blog*` takes the folder's files).
 */
function patternOf(entry: string): RegExp {
  let re = patterns.get(entry)
  if (re) return re
  const body = entry
    .replace(/\/+$/, '')
    .split(/(\*\*|\*|\?)/)
    .map((part) =>
      part === '**'
        ? '.*'
        : part === '*'
          ? '[^/]*'
          : part === '?'
            ? '[^/]'
            : part.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
    )
    .join('')
  re = new RegExp(`^${body}(?:/.*)?$`)
  patterns.set(entry, re)
  return re
}
