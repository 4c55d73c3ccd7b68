// What the local page shows, as the server sends it: every value is computed here, in the
// process, from the same model `status --json` prints and the events `watch --json` prints; the
// browser only lays it out (docs/page.md "One truth"). Values from files and the server travel as
// text (JSON.stringify of a leaf) and are rendered as text.

import type { ConflictLeaf } from '../engine/merge/merge-json.js'
import type { PauseInfo } from '../watch/mass-change.js'

/** The part of a status item the page reads (cli/status-model.ts gives more). */
export interface StatusItem {
  kind: string
  id: string
  path: string
  local: string
  remote: string
  action: string
  leaves?: ConflictLeaf[]
  reason?: string
  error?: string
}

/**
 * What the watcher or a guard holds back, as `status --json` lists it beside `changes`. Read
 * loosely: only `path` is needed; `kind`, `reason`, `since`, `message` are shown when present.
 */
export interface HeldInput {
  path?: string
  paths?: string[]
  kind?: string
  reason?: string
  since?: string
  message?: string
  count?: number
  /** HeldChange (engine/held.ts): whose change waits, what it would do, and the CLI's commands. */
  side?: 'local' | 'remote'
  action?: string
  guard?: string
  release?: string
  drop?: string
}

/** What a held group's button does, through the same engine call as the command it names. */
export type HeldAct = { op: 'release' } | { op: 'restore' } | { op: 'resolve'; keep: 'local' | 'remote' }

/** The status model the page is built from (status-model.ts's StatusRead, plus its --json document). */
export interface StatusInput {
  changes: StatusItem[]
  problems: unknown[]
  watchPaused: PauseInfo | undefined
  tokenRefused: string | undefined
  held: HeldInput[]
  /** What status could not vouch for (`status --json` lists them beside `changes`). */
  notSynced?: Array<{ path: string }>
  reverted?: Array<{ path: string }>
  unverified?: Array<{ path: string }>
  /** The `status --json` document itself. */
  document: Record<string, unknown>
}

export interface LeafView {
  /** JSON Pointer (empty: the whole document). */
  pointer: string
  /** Each side's value as JSON text; absent where that side lacks the leaf. */
  base?: string
  local?: string
  remote?: string
  order?: true
  changedLocal: boolean
  changedRemote: boolean
}

export interface MediaSide {
  /** Relative to the page, carrying no secret of its own. */
  url: string
  /** A raster image the browser may show; anything else (SVG included) is offered as a file. */
  image: boolean
}

export interface ConflictView {
  path: string
  kind: string
  id: string
  local: string
  remote: string
  reason?: string
  leaves: LeafView[]
  media?: { local?: MediaSide; remote?: MediaSide }
  /** The folder the item is in, for "every conflict under this folder". */
  folder: string
}

export interface HeldItem {
  path: string
  kind?: string
  action?: string
}

export interface HeldView {
  reason: string
  since?: string
  message?: string
  items: HeldItem[]
  /** The commands the CLI offers for the same choice. */
  release: string
  drop: string
  /** What "carry them out" and "drop them" do here; absent: no button (the CLI text says what to do). */
  releaseAct?: HeldAct
  dropAct?: HeldAct
}

export interface FeedEntry {
  time: string
  event: string
  path?: string
  action?: string
  message?: string
}

export interface DaemonView {
  state: 'watching' | 'starting' | 'offline' | 'paused' | 'holding' | 'not-watching' | 'stopped'
  why?: string
  nextPollAt?: string
  queued?: number
}

export interface PageState {
  mode: 'watch' | 'ui'
  target: { server: string; project: string; environment: string }
  token: { source: string; accepted?: boolean; message?: string }
  daemon: DaemonView
  rateLimit: { requestsPerSecond: number; concurrency: number; rateLimited: number }
  counts: {
    clean: boolean
    toSync: number
    problems: number
    byAction: Record<string, number>
    /** What was not compared, one line each with the command that compares or settles it, as status says it. */
    unchecked: string[]
  }
  conflicts: ConflictView[]
  held: HeldView[]
  /** ISO time of the status read shown; undefined before the first. */
  checkedAt?: string
  /** The last status read failed: why (the page keeps showing the one before). */
  error?: string
}
