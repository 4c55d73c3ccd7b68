// One assembly of a planned run from its three sides, whatever way they were taken: a full run
// scans every file and lists every kind (plan-and-apply.ts), an edit-only run scans a few paths and reads
// each from the server by id (plan-edits.ts). What is planned from the sides, and how, is the
// same for both and is here: paths held out of the plan, the bases with their alternates, the
// planner, inheritance, the merges, and the run the executor is given.

import { BaseStore } from '../state/base-store.js'
import type { ItemState, StateStore } from '../state/state-file.js'
import { heldBy, type LocalEntry, type ScanProblem, unsyncedPaths } from '../workspace/scan.js'
import { distrustUnprovenLockBases } from './lock-proof.js'
import type { MediaRun } from './media/media-snapshot.js'
import { planMerges } from './merges.js'
import { type BaseVersion, plan, type Side } from './plan.js'
import type { EngineDeps, PlannedRun } from './plan-apply-types.js'
import { withPublishEntries } from './publish-entries.js'
import type { RemoteEntry, RemoteProblem } from './remote-snapshot.js'
import { settleSecretLeaves } from './secret-leaves.js'
import { type SettleDeletions, settleDeletions } from './settle-deletions.js'

/** The three sides of the JSON kinds, as one way of taking them found them. */
export interface Sides {
  /** The state's items of the synced kinds the sides cover, ignored paths left out. */
  base: readonly ItemState[]
  local: Map<string, LocalEntry>
  remote: Map<string, RemoteEntry>
  scanProblems: ScanProblem[]
  remoteProblems: RemoteProblem[]
}

export interface PlanSidesOptions {
  prefer?: Side
  /** resolve --keep on single leaves (merges.ts). */
  leaves?: ReadonlyMap<string, readonly string[]>
  /**
   * resolve --keep on deletions: settled before the publishes are planned, so a server deletion
   * undone by pushing a published file is published again, as any push of a published item is.
   */
  settle?: SettleDeletions
  rebound?: boolean
  /** Each server item was read by id just now (PlannedRun.fresh). */
  fresh?: true
  /** The media side, planned on its own (media are matched across paths by their bytes). */
  media?: (planOptions: { prefer?: Side }) => Promise<MediaRun | undefined>
}

export async function planSides(
  deps: EngineDeps,
  store: StateStore,
  sides: Sides,
  opts: PlanSidesOptions,
): Promise<PlannedRun> {
  const { local, remote } = sides
  // A path holding no file and no deletion (a FIFO, a folder, an unreadable file, a server item
  // too deep to compare) is out of the plan on every side: reported, never deleted or overwritten.
  const unsynced = unsyncedPaths(sides.scanProblems)
  for (const problem of sides.remoteProblems) if (problem.unsynced) unsynced.add(problem.unsynced)
  // A linked kind folder holds every item under it.
  const held = heldBy(unsynced)
  if (unsynced.size > 0) for (const path of [...remote.keys()]) if (held(path)) remote.delete(path)
  const base = new Map<string, BaseVersion>()
  for (const item of sides.base) {
    if (held(item.path)) continue
    const alt = store.alternates.get(item.path)
    base.set(item.path, {
      kind: item.kind,
      id: item.id,
      path: item.path,
      hash: item.baseHash,
      ...(alt === undefined ? {} : { alt: alt?.baseHash ?? null }),
    })
  }
  const planOptions = opts.prefer ? { prefer: opts.prefer } : {}
  const result = plan(base, local, remote, planOptions)
  for (const item of result.items) if (remote.get(item.path)?.inherited) item.inherited = true
  const { root, client, codecs, baseFallback, whyNoBase } = deps
  // What the lock alone says may not delete or overwrite a server item unless git agrees.
  await distrustUnprovenLockBases(result.items, store, local, remote, codecs, baseFallback, planOptions)
  // Only the items changed on both sides read a base (merges.ts).
  const bases = new BaseStore(deps.root)
  const merges = await planMerges(
    {
      root,
      client,
      codecs,
      bases,
      ...(baseFallback ? { baseFallback } : {}),
      ...(whyNoBase ? { whyNoBase } : {}),
    },
    store,
    result.items,
    local,
    remote,
    { ...planOptions, ...(opts.leaves ? { leaves: opts.leaves } : {}) },
  )
  // A connection's secrets are leaves the hashes cannot see: compared before anything is written.
  await settleSecretLeaves(root, codecs, result.items, remote, opts.prefer)
  if (opts.settle) settleDeletions(result.items, opts.settle.scope, opts.settle.keep)
  const items = await withPublishEntries(result.items, {
    root,
    client,
    codecs,
    store,
    local,
    remote,
    merges,
    mode: deps.publishing ?? 'auto',
  })
  const media = await opts.media?.(planOptions)
  return {
    store,
    plan: { items: media ? [...items, ...media.items] : items },
    local,
    remote,
    scanProblems: [...sides.scanProblems, ...(media?.scanProblems ?? [])],
    remoteProblems: [
      ...sides.remoteProblems,
      ...(media?.match.problems.map((p) => ({ kind: 'media' as const, ...p })) ?? []),
    ],
    rebound: opts.rebound ?? false,
    ...(opts.fresh ? { fresh: true as const } : {}),
    ...(media ? { media } : {}),
    merges,
    bases,
  }
}
