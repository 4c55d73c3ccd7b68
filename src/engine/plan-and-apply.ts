// One run of the engine, shared by every command: read the three sides, plan, check the
// guards, then carry out the actions the command selects. status and diff stop after the
// plan; pull, push, sync and resolve differ only in the actions they select.

import { CliError, ExitCode } from '../errors/exit-codes.js'
import { RemoteError } from '../remote/errors.js'
import type { RemoteMedia } from '../remote/media.js'
import { BaseStore } from '../state/base-store.js'
import { type CommittedBase, parseLock, readLockText, sameBase } from '../state/committed-base.js'
import { PushJournal } from '../state/push-journal.js'
import { emptyState, type ItemState, StateStore, sameTarget } from '../state/state-file.js'
import { type Codec, usersOf } from '../workspace/codec.js'
import { refuseCommittedSyncDir } from '../workspace/git-base.js'
import { type IgnoreRules, keepTracked, loadIgnoreRules } from '../workspace/ignore-rules.js'
import { FOLDER_OF, isBytes, type Kind } from '../workspace/kinds.js'
import { scanWorkspace } from '../workspace/scan.js'
import {
  DEFAULT_MAX_DELETES,
  deleteGuard,
  deletesHeldByRenamedFiles,
  deletesHeldByUse,
  describeStop,
  formEntriesGuard,
  type GuardResult,
  inheritanceGuard,
  listingGuard,
  orphanGuard,
  rerunFlag,
  targetGuard,
} from './guards.js'
import { type HeldChange, heldChanges, itemsStoppedBy } from './held.js'
import { adoptLandedPushes } from './landed-pushes.js'
import { type MediaRun, snapshotMedia } from './media/media-snapshot.js'
import { recordVerified } from './media/media-verified.js'
import { orphaningDeletes } from './orphans.js'
import { dryRunOutcome, type Outcome, problemReports, reportOf } from './outcome.js'
import type { PlanItem, Side } from './plan.js'
import {
  type ApplyOptions,
  type EngineDeps,
  inScope,
  type MediaDeps,
  type MergeWrites,
  type PlannedRun,
} from './plan-apply-types.js'
import { planEdits } from './plan-edits.js'
import { planSides } from './plan-sides.js'
import { predictFailures, referenceContext } from './predict.js'
import type { RemotePort } from './remote-port.js'
import {
  basesEqual,
  ListingFailedError,
  type Listings,
  type RemoteSnapshot,
  requestListings,
  settleLater,
  snapshotRemote,
} from './remote-snapshot.js'
import type { SettleDeletions } from './settle-deletions.js'
import { type UnchangedRun, unchangedRun } from './unchanged-run.js'
import { usesAfterRun } from './uses-after-run.js'

// The engine's two calls, planRun then applyRun, are here; what they pass is in plan-apply-types.ts.
export type { ApplyOptions, EngineDeps, MediaDeps, MergeWrites, PlannedRun } from './plan-apply-types.js'
export { inScope, SELECT } from './plan-apply-types.js'

const MEDIA = { kind: 'media' as const }

/** Exit 4: a guard stopped the run before anything changed. */
export class SafetyStopError extends CliError {
  constructor(
    message: string,
    /** The flag whose "re-run with" the message names (watch names the commands instead). */
    readonly rerunWith?: string,
  ) {
    super(message, ExitCode.safetyStop)
  }
}

/**
 * A path argument that names nothing the run knows (no file, no server item, no base) is a
 * usage error, as with git: `cms-sync push content/hom.json` must not succeed by doing nothing.
 */
export function checkScope(run: Pick<PlannedRun, 'plan' | 'scanProblems'>, scope: readonly string[]): void {
  const known = [...run.plan.items.map((item) => item.path), ...run.scanProblems.map((p) => p.path)]
  const unmatched = scope.filter((p) => p !== '' && !known.some((path) => inScope(path, [p])))
  if (unmatched.length === 0) return
  throw new CliError(
    `${unmatched.map((p) => JSON.stringify(p)).join(', ')} did not match any file or server item (check the spelling, or \`cms-sync status\` for what is synced)`,
    ExitCode.usage,
  )
}

function stopUnlessOk(result: GuardResult): void {
  if (!result.ok) throw new SafetyStopError(describeStop(result), rerunFlag(result))
}

/** The state a run plans against, checked against the configured target. */
export async function openState(
  deps: Pick<EngineDeps, 'root' | 'target'>,
  opts: {
    rebind?: boolean
    batch?: ConstructorParameters<typeof StateStore>[2]
  } = {},
): Promise<{ store: StateStore; rebound: boolean }> {
  const rebind = opts.rebind ?? false
  const [saved] = await Promise.all([
    StateStore.open(deps.root, opts.batch),
    refuseCommittedSyncDir(deps.root),
  ])
  // The lock the state itself wrote (the last run wrote both: the usual case) adds nothing to
  // it, and its stat says so without reading it; it is parsed and joined only when it says
  // something else (git moved it, a fresh clone).
  const lockFile = saved?.lockUnmoved() ? undefined : await readLockText(deps.root)
  const lock =
    lockFile === undefined || saved?.recognizeLock(lockFile.text, lockFile.stat)
      ? undefined
      : parseLock(lockFile.text)
  // Either record binds the workspace: the state on this machine, the lock in every clone.
  stopUnlessOk(targetGuard(saved?.target, deps.target, rebind))
  stopUnlessOk(targetGuard(lock?.target, deps.target, rebind))
  // A new target makes the old base meaningless: start over as a fresh clone, which never deletes.
  const rebound =
    (!!saved && !sameTarget(saved.target, deps.target)) || (!!lock && !sameTarget(lock.target, deps.target))
  const store = saved && !rebound ? saved : new StateStore(deps.root, emptyState(deps.target), opts.batch)
  const alternates = lock && !rebound ? joinCommittedBase(store, lock, !!saved) : undefined
  store.pushes = await PushJournal.load(deps.root)
  for (const [path, alternate] of alternates ?? []) store.alternates.set(path, alternate)
  return { store, rebound }
}

/**
 * Joins the lock's bases to the state's (docs/lock.md) and returns where they disagree. Without
 * local state the lock is the base. With both, an item the state lacks takes the lock's base;
 * an item whose bases differ (git moved the lock: a pull, a checkout, a merge) keeps both, and
 * the planner acts only where both agree or one of them leaves no doubt (plan.ts).
 */
function joinCommittedBase(
  store: StateStore,
  lock: CommittedBase,
  hadState: boolean,
): Map<string, ItemState | null> {
  const alternates = new Map<string, ItemState | null>()
  // Bases the lock changed are no longer the listings the validators name (remote-snapshot.ts).
  let added = 0
  if (hadState) {
    // Media are planned against the state alone (their base is also their place: media-match.ts).
    for (const item of store.items())
      if (!isBytes(item.kind) && !lock.items.has(item.path)) alternates.set(item.path, null)
  }
  for (const [path, item] of lock.items) {
    const known = store.get(path)
    if (!known) {
      store.join(item)
      added++
    } else if (!sameBase(known, item) && !isBytes(item.kind)) alternates.set(path, item)
  }
  if (added > 0 || alternates.size > 0) store.dropValidators()
  return alternates
}

export async function planRun(
  deps: EngineDeps,
  opts: {
    prefer?: Side
    rebind?: boolean
    /**
     * Read every file instead of trusting the stat cache, and ask every listing without its kept
     * ETag (watch's periodic deep rescan: a server whose ETag never changes cannot hide a change).
     */
    rehash?: boolean
    /** The state as the caller keeps it in memory (watch, which holds the lock for its whole life). */
    store?: StateStore
    /** resolve --keep on single leaves (JSON Pointers per path): settles only these (merges.ts). */
    leaves?: ReadonlyMap<string, readonly string[]>
    /** resolve --keep on deletions under these paths (settle-deletions.ts), before publishing is planned. */
    settle?: SettleDeletions
    /** Gives the listings up (Ctrl-C while they are read): planRun then rejects with its reason. */
    signal?: AbortSignal
    /**
     * A whole-workspace run that finds nothing changed on either side (unchanged-run.ts, listings
     * read in full included when each item is its base) plans nothing: an empty plan, not one
     * entry per item (watch's full runs: the start-up reconcile, a poll).
     */
    unlessUnchanged?: boolean
    /**
     * The paths the command names (workspace-relative; none: everything). Files of items are
     * planned on their own (plan-edits.ts): read by id, never listed. Anything else (a folder,
     * media, a case plan-edits leaves) is planned in full, and the command applies its scope.
     */
    scope?: readonly string[]
  },
): Promise<PlannedRun> {
  let opened: { store: StateStore; rebound: boolean } | undefined
  if (opts.scope?.length && !opts.rehash && !opts.leaves && !opts.settle) {
    opened = opts.store
      ? { store: opts.store, rebound: false }
      : await openState(deps, { rebind: opts.rebind ?? false })
    if (!opened.rebound) {
      const edit = await planEdits(
        deps,
        opened.store,
        await loadIgnoreRules(deps.root),
        new Set(opts.scope),
        {
          strict: true,
          ...(opts.prefer ? { prefer: opts.prefer } : {}),
        },
      )
      if (edit.kind === 'planned') return edit.run
      deps.logger.debug({ why: edit.why }, 'the paths named need a full plan')
    }
  }
  // The listings are most of the wait of a run that changes nothing: all of them are asked for
  // first (reads from the configured target, whatever the state says), and arrive while the
  // state and the workspace are read. A run that stops meanwhile (a guard, a bad file) gives
  // them up. Only a plain run of everything may find nothing to plan: not one that rebinds,
  // rereads every file, settles, prefers a side or names paths.
  const plain = !(
    opts.prefer ||
    opts.rebind ||
    opts.rehash ||
    opts.leaves ||
    opts.settle ||
    opts.scope?.length
  )
  return withListings(deps, opts, opened, async (store, rebound, listings) => {
    const unchanged =
      opts.unlessUnchanged && plain && !rebound ? await unchangedOf(deps, store, listings, true) : undefined
    return unchanged
      ? nothingPlanned(deps, store, unchanged, listings)
      : readAndPlan(deps, opts, store, rebound, listings)
  })
}

/**
 * A whole-workspace status: the run that found nothing changed on either side when it can tell
 * that from the listings' 304s and the files' stats alone (unchanged-run.ts), else the plan.
 */
export async function planUnlessUnchanged(
  deps: EngineDeps,
  opts: { signal?: AbortSignal } = {},
): Promise<PlannedRun | UnchangedRun> {
  return withListings(deps, opts, undefined, async (store, rebound, listings) => {
    const unchanged = rebound ? undefined : await unchangedOf(deps, store, listings, false)
    return unchanged ?? readAndPlan(deps, {}, store, rebound, listings)
  })
}

/** The run's answer when nothing changed (unchanged-run.ts), said in the log; else undefined. */
async function unchangedOf(
  deps: EngineDeps,
  store: StateStore,
  listings: AllListings,
  readInFull: boolean,
): Promise<UnchangedRun | undefined> {
  const unchanged = await unchangedRun({
    root: deps.root,
    codecs: deps.codecs,
    media: deps.media,
    store,
    rules: await loadIgnoreRules(deps.root),
    listings: listings.json,
    mediaListing: listings.mediaRead,
    incomplete: (codec) => codec.listIsIncomplete(deps.client.capabilities.listing),
    readInFull,
  })
  if (unchanged)
    deps.logger.info(
      { items: unchanged.items, notModified: unchanged.notModified, readInFull: unchanged.readInFull },
      'nothing changed: every listing is the bases and every file has its recorded stat; no plan made',
    )
  return unchanged
}

/**
 * The plan of a whole-workspace run that found nothing changed: no entry at all, where the full
 * plan has one `none` per item. applyRun then carries out nothing and does what ends every run:
 * the validators of the listings read in full (the media's too: it is the bases), the save.
 */
function nothingPlanned(
  deps: EngineDeps,
  store: StateStore,
  unchanged: UnchangedRun,
  listings: AllListings,
): PlannedRun {
  return {
    store,
    plan: { items: [] },
    local: new Map(),
    remote: new Map(),
    scanProblems: [],
    remoteProblems: [],
    strays: [],
    rebound: false,
    merges: new Map(),
    bases: new BaseStore(deps.root),
    validators: {
      listed: unchanged.listed,
      ...(deps.media && listings.mediaDrops !== undefined
        ? { mediaDrops: listings.mediaDrops, mediaIsBases: true as const }
        : {}),
    },
  }
}

/** Opens the state (unless `opened`), asks for every listing, and hands them to `read`. */
async function withListings<T>(
  deps: EngineDeps,
  opts: {
    rebind?: boolean
    rehash?: boolean
    store?: StateStore
    leaves?: unknown
    settle?: unknown
    signal?: AbortSignal
  },
  opened: { store: StateStore; rebound: boolean } | undefined,
  read: (store: StateStore, rebound: boolean, listings: AllListings) => Promise<T>,
): Promise<T> {
  const cancel = new AbortController()
  const giveUp = () => cancel.abort(opts.signal?.reason)
  if (opts.signal?.aborted) giveUp()
  else opts.signal?.addEventListener('abort', giveUp, { once: true })
  try {
    const { store, rebound } =
      opened ??
      (opts.store
        ? { store: opts.store, rebound: false }
        : await openState(deps, { rebind: opts.rebind ?? false }))
    // The state records the validators of the listings its bases equal, and the client drops a
    // kind's before each of the tool's writes to it (remote-snapshot.ts).
    deps.client.useValidators?.(store)
    // Asked with those validators unless the run must see every listing as it is: the deep
    // rescan, a resolve. The listings are most of the wait of a run that changes nothing: all of
    // them are asked for first, and arrive while the workspace is read.
    const conditional = !opts.rehash && !opts.leaves && !opts.settle
    // An item listed unchanged is kept as its base (remote-snapshot.ts), except for a resolve,
    // which reads the server's side of every item it settles.
    const bases = opts.leaves || opts.settle ? undefined : store
    const media = deps.media ? mediaListing(deps.media.api, store, cancel.signal, conditional) : undefined
    const listings: AllListings = {
      json: requestListings(deps.client, deps.codecs, cancel.signal, conditional, bases),
      ...(media
        ? {
            media: settleLater(media.then((read) => read.media)),
            mediaRead: settleLater(media),
            mediaDrops: store.dropsOf('media'),
          }
        : {}),
      cancel: cancel.signal,
    }
    // Stopped after the listings came: the plan stands, and applyRun (given the same signal)
    // reports every item of it as left.
    return await read(store, rebound, listings)
  } catch (error) {
    cancel.abort()
    throw error
  } finally {
    opts.signal?.removeEventListener('abort', giveUp)
  }
}

/**
 * The server's media: a 304 to the validator the media bases equal stands for those bases, each
 * as the server listed it when they were recorded (name, folder, updateDate: the base's rev).
 */
async function mediaListing(
  api: MediaDeps['api'],
  store: StateStore,
  signal: AbortSignal,
  conditional: boolean,
): Promise<{ media: RemoteMedia[]; unchanged: boolean }> {
  if (!conditional) return { media: await api.list({ signal }), unchanged: false }
  const listed = await api.listUnlessUnchanged({ signal })
  if (listed) return { media: listed, unchanged: false }
  const bases: RemoteMedia[] = []
  for (const item of store.items('media'))
    if (item.media)
      bases.push({
        id: item.id,
        name: item.media.name,
        folder: item.media.folder,
        updateDate: item.remoteRev === '' ? null : item.remoteRev,
      })
  return { media: bases, unchanged: true }
}

interface AllListings {
  json: Listings
  media?: Promise<RemoteMedia[]>
  /** The same, with whether it answered 304 to the recorded validator (then it is the bases). */
  mediaRead?: Promise<{ media: RemoteMedia[]; unchanged: boolean }>
  /** How many times the media validator was dropped when the media listing was asked for. */
  mediaDrops?: number
  /** Gives the listings up with the run. */
  cancel: AbortSignal
}

/** The three sides of every kind, and the plan: planRun once the listings are on their way. */
async function readAndPlan(
  deps: EngineDeps,
  opts: {
    prefer?: Side
    rehash?: boolean
    leaves?: ReadonlyMap<string, readonly string[]>
    settle?: SettleDeletions
  },
  store: StateStore,
  rebound: boolean,
  listings: AllListings,
): Promise<PlannedRun> {
  const kinds = new Set(deps.codecs.map((codec) => codec.kind))
  // .cmsyncignore'd paths are never synced either way: out of all three sides of the plan.
  const rules = await loadIgnoreRules(deps.root)
  // The base, the scan and the listing name mostly the same paths: the built-in rules settle one
  // in a few character tests, and a .cmsyncignore's answers are remembered (ignore-rules.ts).
  const synced = (path: string) => !rules.ignores(path)
  let baseItems = store.items().filter((item) => kinds.has(item.kind) && synced(item.path))
  const scan = await scanWorkspace(
    deps.root,
    deps.codecs,
    (path) => (opts.rehash ? undefined : store.get(path)),
    (path) => !synced(path),
  )
  let snapshot: RemoteSnapshot
  try {
    const sides = {
      baseAt: (path: string, rev: string) => store.baseAt(path, rev),
      get: (path: string) => store.get(path),
      items: (kind: Kind) => store.items(kind),
      dropsOf: (name: string) => store.dropsOf(name),
    }
    snapshot = await snapshotRemote(deps.client, deps.codecs, sides, (path) => !synced(path), listings.json)
    // A 304 stands for the bases, with no server objects: enough for a run with nothing to do.
    // One that has something to do reads those listings in full, and plans on them. Items listed
    // unchanged stand for their bases too: enough while the workspace is the bases (a change on
    // the server is kept whole); a run with a local change reads those listings again, whole.
    const quiet = workspaceIsBases(store, scan, baseItems)
    const { unchanged, standIns } = snapshot
    const notModified = unchanged.size > 0 && !(quiet && serverIsBases(store, snapshot, kinds))
    const whole = deps.codecs.filter(
      (codec) => (notModified && unchanged.has(codec.kind)) || (!quiet && standIns.has(codec.kind)),
    )
    if (whole.length > 0) {
      const again = new Map(listings.json)
      const full = requestListings(deps.client, whole, listings.cancel)
      for (const [kind, read] of full) again.set(kind, read)
      snapshot = await snapshotRemote(deps.client, deps.codecs, sides, (path) => !synced(path), again)
    }
  } catch (error) {
    if (error instanceof ListingFailedError) {
      // The client's listing error (code 'listing') already says that nothing was changed.
      const said = error.cause instanceof RemoteError && error.cause.code === 'listing'
      const stop = new SafetyStopError(`safety stop: ${error.message}${said ? '' : '; nothing was changed'}`)
      stop.cause = error
      throw stop
    }
    throw error
  }
  // Pushes a killed run made that its state never saved: their bases, before anything is planned.
  const adopted = await adoptLandedPushes(store, new BaseStore(deps.root), snapshot.entries, kinds)
  if (adopted.length > 0) {
    deps.logger.info({ paths: adopted }, 'pushes an earlier run made but did not record are the base now')
    baseItems = store.items().filter((item) => kinds.has(item.kind) && synced(item.path))
  }
  const sides = {
    base: baseItems,
    local: mapByPath(scan.entries),
    remote: snapshot.entries,
    scanProblems: scan.problems,
    remoteProblems: snapshot.problems,
  }
  const { media } = deps
  const run = await planSides(deps, store, sides, {
    ...(opts.prefer ? { prefer: opts.prefer } : {}),
    ...(opts.leaves ? { leaves: opts.leaves } : {}),
    ...(opts.settle ? { settle: opts.settle } : {}),
    rebound,
    ...(media && listings.media
      ? { media: (planOptions) => mediaSide(deps, media, store, planOptions, rules, listings.media!) }
      : {}),
  })
  const validators = {
    listed: snapshot.listed,
    ...(deps.media && listings.mediaDrops !== undefined ? { mediaDrops: listings.mediaDrops } : {}),
  }
  return { ...run, strays: scan.strays, validators }
}

/**
 * Whether the workspace is the bases on the JSON kinds: every file is its base (none added or
 * gone, no problem), the lock agrees with the state, no deploy is pending. Then no item the
 * server left unchanged is pushed, merged or deleted there, and its server object is never read.
 */
function workspaceIsBases(
  store: StateStore,
  scan: { entries: readonly { path: string; hash: string }[]; problems: readonly unknown[] },
  baseItems: readonly ItemState[],
): boolean {
  if (scan.problems.length > 0 || store.alternates.size > 0) return false
  if (scan.entries.length !== baseItems.length) return false
  // A deploy left pending reads the server's publish flag (publish-entries.ts).
  if (baseItems.some((item) => item.deploy !== undefined)) return false
  for (const entry of scan.entries) if (store.get(entry.path)?.baseHash !== entry.hash) return false
  return true
}

/**
 * Whether the server side is the bases too: no problem, and every listing read in full is its
 * kind's bases. With the workspace the bases, the run has nothing to do on the JSON kinds, and the
 * sides of the kinds answered 304 are never asked for a server object.
 */
function serverIsBases(store: StateStore, snapshot: RemoteSnapshot, kinds: ReadonlySet<Kind>): boolean {
  if (snapshot.problems.length > 0) return false
  for (const kind of kinds) {
    if (snapshot.unchanged.has(kind)) continue
    const listed = snapshot.listed.get(kind)
    if (!listed || !basesEqual(store, kind, listed)) return false
  }
  return true
}

/**
 * At the end of a run: records, per kind read in full (and media), the validator of its listing
 * when the bases now equal it item for item (a status that found no change, a pull that took
 * every change), so that the next run's conditional read is one 304.
 */
function recordValidators(deps: EngineDeps, run: PlannedRun): void {
  const { store, validators } = run
  if (!validators) return
  for (const [kind, listed] of validators.listed)
    if (basesEqual(store, kind, listed)) store.setValidator(FOLDER_OF[kind], listed.validator)
  const media = deps.media?.api.listedValidator?.()
  if (!media || validators.mediaDrops !== store.dropsOf('media')) return
  if (validators.mediaIsBases) {
    store.setValidator('media', media)
    return
  }
  if (!run.media) return
  // Media: the plan saw no server change, and the listing names exactly the media bases.
  const changed = run.plan.items.some((item) => isBytes(item.kind) && item.remote !== 'unchanged')
  if (!changed && run.media.remoteCount === store.countOf('media')) store.setValidator('media', media)
}

async function mediaSide(
  deps: EngineDeps,
  media: MediaDeps,
  store: StateStore,
  planOptions: { prefer?: Side },
  rules: IgnoreRules,
  listing: Promise<RemoteMedia[]>,
): Promise<MediaRun> {
  try {
    return await snapshotMedia(deps.root, media.api, store, {
      ...planOptions,
      listing,
      ignored: (path) => rules.ignores(path),
      ignoredByChoice: (path) => rules.ignoresByChoice(path),
      track: (paths) => keepTracked(deps.root, paths),
      checksum: media.checksum,
      concurrency: media.concurrency,
      ...(media.history ? { history: media.history } : {}),
      ...(media.recheck ? { recheck: media.recheck } : {}),
    })
  } catch (error) {
    if (error instanceof RemoteError && error.code === 'listing') {
      const stop = new SafetyStopError(`safety stop: ${error.message}`)
      stop.cause = error
      throw stop
    }
    throw error
  }
}

/** The items this run would delete on the server that hold entries (one read per such delete). */
async function withEntries(
  client: RemotePort,
  codecs: readonly Codec[],
  selected: readonly PlanItem[],
): Promise<{ path: string; entries: number }[]> {
  const found: { path: string; entries: number }[] = []
  const holding = new Set(codecs.filter((codec) => codec.holdsEntries).map((codec) => codec.kind))
  for (const item of selected) {
    if (!holding.has(item.kind) || item.action !== 'delete-remote' || !client.formEntries) continue
    const entries = (await client.formEntries(item.id))?.length ?? 0
    if (entries > 0) found.push({ path: item.path, entries })
  }
  return found
}

/** Whether carrying out these entries writes to the server (anything beyond pulls and base merges). */
function changesServer(selected: readonly PlanItem[], writes: MergeWrites): boolean {
  return selected.some(
    (item) =>
      item.action === 'push' ||
      item.action === 'delete-remote' ||
      (item.action === 'merge' && writes !== 'local'),
  )
}

/**
 * Checks the token once before a run writes to the server. Upstream answers reads and takes
 * schema, form and media writes without a token, then refuses the content: without this, a run
 * with an expired token wrote part of its plan and stopped halfway.
 */
async function tokenAccepted(client: RemotePort): Promise<void> {
  if (!client.checkToken) return
  try {
    await client.checkToken()
  } catch (error) {
    if (error instanceof RemoteError && error.code === 'unauthorized') {
      // The cause lets the command line name where the token came from (cli/context.ts).
      const lead = 'nothing was sent to the server: '
      const stop = new CliError(`${lead}${error.message}`, ExitCode.usage, lead)
      stop.cause = error
      throw stop
    }
    throw error
  }
}

export async function applyRun(deps: EngineDeps, run: PlannedRun, opts: ApplyOptions): Promise<Outcome> {
  const chosen = run.plan.items.filter((item) => opts.select(item) && inScope(item.path, opts.scope))
  const renamed = deletesHeldByRenamedFiles(chosen, run.local.values())
  const used = deletesHeldByUse(chosen, await usesAfterRun(deps.root, deps.codecs, run, chosen))
  for (const [path, why] of used) if (!renamed.has(path)) renamed.set(path, why)
  let selected: PlanItem[]
  let held: HeldChange[]
  try {
    ;({ selected, held } = await heldByGuards(
      deps,
      run,
      chosen.filter((item) => !renamed.has(item.path)),
      {
        allowDeletes: opts.allowDeletes,
        hold: opts.holdGuarded === true,
      },
    ))
    if (!opts.dryRun && changesServer(selected, opts.mergeWrites ?? 'both')) await tokenAccepted(deps.client)
  } catch (error) {
    await run.media?.dispose()
    throw error
  }
  const problems = [
    ...chosen
      .filter((item) => renamed.has(item.path))
      .map((item) => reportOf(item, { error: renamed.get(item.path)! })),
    ...problemReports(run, opts),
  ]
  if (opts.dryRun) {
    await run.media?.dispose()
    const planned = dryRunOutcome(selected, await predictFailures(deps, run, selected))
    return { ...planned, failed: [...planned.failed, ...problems], ...(held.length ? { held } : {}) }
  }
  if (run.rebound) await run.store.save()
  const now = opts.now ?? (() => new Date().toISOString())
  const references = await referenceContext(deps, run, selected)
  const mergeWrites = opts.mergeWrites ?? 'both'
  // Loaded only by runs that write: status and diff never need the executor's code.
  const [{ execute }, { jsonFamily }, { mediaFamily }, { hasConflictCopies, LocalWriter }, { RecentPushes }] =
    await Promise.all([
      import('./execute.js'),
      import('./json-apply.js'),
      import('./media/media-apply.js'),
      import('../workspace/local-writes.js'),
      import('../state/recent-pushes.js'),
    ])
  const recent = await RecentPushes.load(deps.root)
  const writer = new LocalWriter(
    deps.root,
    now().replace(/[:.]/g, '-'),
    deps.beforeLocalWrite,
    run.store.durability,
  )
  const ctx = {
    root: deps.root,
    client: deps.client,
    store: run.store,
    writer,
    logger: deps.logger,
    now,
    references,
    local: run.local,
    remote: run.remote,
    remoteReadJustNow: run.fresh === true,
    hadConflicts: await hasConflictCopies(deps.root),
    merges: run.merges,
    mergeWrites,
    bases: run.bases,
    baseText: async (item: PlanItem, hash: string, codec: Codec) =>
      (await run.bases.read(hash)) ?? (await deps.baseFallback?.(item, hash, codec, [])),
    ...(opts.deferPublish ? { deferPublish: opts.deferPublish } : {}),
    recent,
  }
  let outcome: Outcome
  let stopped = true
  try {
    const jsonItems = selected.filter((item) => !isBytes(item.kind))
    const mediaItems = selected.filter((item) => isBytes(item.kind))
    // The report keeps its order: the JSON kinds' entries, then the media's.
    const families = [await jsonFamily(ctx, jsonItems, deps.codecs)]
    if (run.media)
      families.push(mediaFamily({ root: deps.root, store: run.store, writer, run: run.media }, mediaItems))
    outcome = await execute(families, {
      store: run.store,
      logger: deps.logger,
      // A run that writes to the server does the JSON kinds first, then media, as they always
      // went. One that only changes the workspace runs media downloads (the network) while the
      // JSON files are written (the disk): they share nothing but the state, each committing its
      // own items.
      sideBySide: !changesServer(selected, mergeWrites),
      onProgress: opts.onProgress,
      signal: opts.signal,
      usersOf: (kind) => usersOf(deps.codecs, kind),
    })
    stopped = false
    // Media bytes this run read and found unchanged: status can say since when they agree.
    recordVerified(run.store, run.media, now())
    for (const item of outcome.applied)
      if (item.action === 'delete-local' || item.action === 'delete-remote') recent.forget(item.path)
  } finally {
    // Kept whatever happened: a push the server confirmed is ours to recognise later.
    await recent
      .save()
      .catch((error) => deps.logger.warn({ error: String(error) }, 'recent pushes not saved'))
    await run.media?.dispose()
    recordValidators(deps, run)
    // A run that stopped (a full disk, a refused token) keeps its own error: a save failing
    // after it, the same way, would only hide it. The state on disk then stays behind the files.
    if (!opts.deferSave)
      await run.store.flush().catch((error) => (stopped ? undefined : Promise.reject(error)))
  }
  // Bases nothing refers to any more go, once the state that dropped them is saved. Knowing
  // that takes every record: a run of named paths leaves it to the next full run that writes.
  if (!opts.deferSave && !run.fresh && run.bases.written > 0) await run.bases.prune(run.store)
  const counts = {
    applied: outcome.applied.length,
    conflicts: outcome.conflicts.length,
    failed: outcome.failed.length,
  }
  if (outcome.interrupted)
    deps.logger.warn(
      { ...counts, left: outcome.interrupted.left },
      `interrupted: ${counts.applied} applied, ${outcome.interrupted.left} left`,
    )
  else deps.logger.info(counts, 'run finished')
  return { ...outcome, failed: [...outcome.failed, ...problems], ...(held.length ? { held } : {}) }
}

/**
 * The guards every run applies, over the entries it would carry out. A guard that trips stops
 * the run (exit 4, nothing changed), unless `hold`: then the entries it is about (those
 * deletions, of that kind) are held out and the rest is checked again, so one guard never
 * freezes what it is not about. `status` runs the same to show what `watch` holds.
 */
export async function heldByGuards(
  deps: EngineDeps,
  run: PlannedRun,
  candidates: readonly PlanItem[],
  opts: { allowDeletes: boolean; hold: boolean },
): Promise<{ selected: PlanItem[]; held: HeldChange[] }> {
  // The guards count the base as the state keeps it, and read the listing only when the run
  // deletes locally: an edit-only run pays for what it selects, not for every synced item.
  const listed: Iterable<{ kind: Kind }> = {
    *[Symbol.iterator]() {
      yield* run.remote.values()
      for (let i = 0; i < (run.media?.remoteCount ?? 0); i++) yield MEDIA
    },
  }
  const allowDeletes = opts.allowDeletes
  const firstStop = async (selected: readonly PlanItem[]): Promise<GuardResult> => {
    for (const result of [
      listingGuard(selected, run.store, listed, { allowDeletes }),
      inheritanceGuard(selected, run.store, run.remote.values(), { allowDeletes }),
      deleteGuard(selected, run.store, {
        maxDeletePercent: deps.maxDeletePercent,
        maxDeletes: deps.maxDeletes ?? DEFAULT_MAX_DELETES,
        allowDeletes,
      }),
    ])
      if (!result.ok) return result
    // Not a question of how many: --allow-deletes does not lift it.
    const orphans = orphanGuard(await orphaningDeletes(deps, run, selected))
    if (!orphans.ok) return orphans
    return formEntriesGuard(allowDeletes ? [] : await withEntries(deps.client, deps.codecs, selected), {
      allowDeletes,
    })
  }
  let selected = [...candidates]
  const held: HeldChange[] = []
  for (;;) {
    const result = await firstStop(selected)
    if (result.ok) return { selected, held }
    const items = opts.hold ? itemsStoppedBy(result, selected, (path) => run.store.isInherited(path)) : []
    if (items.length === 0) throw new SafetyStopError(describeStop(result), rerunFlag(result))
    held.push(...heldChanges(result, items))
    const out = new Set(items.map((item) => item.path))
    selected = selected.filter((item) => !out.has(item.path))
  }
}

/** Entries by their path, without a [path, entry] pair allocated for each. */
function mapByPath<T extends { path: string }>(entries: readonly T[]): Map<string, T> {
  const map = new Map<string, T>()
  for (const entry of entries) map.set(entry.path, entry)
  return map
}
