// The runs a person asks for by name, as one engine call each, for every caller: the commands,
// the watch daemon (on its own state, between two of its runs) and the local page.
//  - resolve: the plan is made with the kept side preferred and only the conflicts it settled
//    under the scope are carried out; the losing version goes to .cms-sync/trash/. Named leaves
//    (JSON Pointers per file) settle only those leaves: the item stays a conflict while other
//    leaves still differ. A deletion (one a guard holds) is settled too: keeping the side that
//    deleted carries it out, keeping the other brings the item back (settle-deletions.ts).
//  - restore: local edits under the scope get the server copy (the edit goes to trash).
//  - release: held local changes under the scope are pushed, deletions allowed (what
//    `cms-sync push --allow-deletes <paths>` does).

import { CliError, ExitCode } from '../errors/exit-codes.js'
import type { StateStore } from '../state/state-file.js'
import type { Outcome } from './outcome.js'
import type { Side } from './plan.js'
import { applyRun, checkScope, planRun } from './plan-and-apply.js'
import { type ApplyOptions, type EngineDeps, SELECT } from './plan-apply-types.js'
import { restoreLocalEdits } from './restore.js'
import { settleDeletions } from './settle-deletions.js'

/**
 * A resolve argument: a file, folder or pattern, or one leaf as `<file>#<JSON Pointer>`
 * (`content/home.json#/properties/title/de`).
 */
export function splitLeaf(arg: string): { file: string; pointer?: string } {
  const hash = arg.indexOf('#')
  if (hash < 0) return { file: arg }
  const pointer = arg.slice(hash + 1)
  if (pointer !== '' && !pointer.startsWith('/'))
    throw new CliError(
      `${arg}: a leaf is named by a JSON Pointer after '#', e.g. content/home.json#/properties/title/de`,
      ExitCode.usage,
    )
  return { file: arg.slice(0, hash), pointer }
}

export interface ResolveRequest {
  /** Workspace-relative files, folders or patterns (`content/blog/*`); every conflict under them. */
  scope: readonly string[]
  keep: Side
  /** Single leaves per file (JSON Pointers): only these are settled in that file. */
  leaves?: ReadonlyMap<string, readonly string[]>
}

/** Settles the conflicts the request names, or throws a usage error naming a leaf that is not in conflict. */
export async function resolveConflicts(
  deps: EngineDeps,
  request: ResolveRequest,
  opts: { store?: StateStore } = {},
): Promise<Outcome> {
  const leaves = request.leaves?.size ? request.leaves : undefined
  // No scope would mean every path to applyRun: a resolve always names what it settles.
  if (request.scope.length === 0 && !leaves)
    throw new CliError('resolve: name the conflicts to settle', ExitCode.usage)
  const planned = await planRun(deps, {
    prefer: request.keep,
    ...(opts.store ? { store: opts.store } : {}),
    ...(leaves ? { leaves } : {}),
    ...(request.scope.length > 0 ? { settle: { scope: request.scope, keep: request.keep } } : {}),
  })
  for (const [file, pointers] of leaves ?? []) {
    const item = planned.plan.items.find((i) => i.path === file)
    if (item?.settledFor !== undefined) continue
    await planned.media?.dispose()
    const open = item?.leaves?.map((leaf) => leaf.path || '(the document)').join(', ')
    throw new CliError(
      `${file}: no conflicting leaf at ${pointers.join(', ')}${open ? ` (its conflicting leaves: ${open})` : item?.reason ? ` (${item.reason})` : ''}`,
      ExitCode.usage,
    )
  }
  // A deletion (one a guard holds) is settled the same way: kept, or undone (the JSON kinds'
  // already were, before their publishes were planned; this settles the media side's).
  if (request.scope.length > 0) settleDeletions(planned.plan.items, request.scope, request.keep)
  return applyRun(deps, planned, {
    select: SELECT.resolve,
    scope: [...request.scope, ...(leaves?.keys() ?? [])],
    dryRun: false,
    // Keeping a deletion is the user's explicit choice for these paths.
    allowDeletes: true,
    reportScanProblems: false,
    reportRemoteProblems: false,
  })
}

/** `restore`: the local edits under `scope` get the server copy; an empty outcome when there are none. */
export async function restoreEdits(
  deps: EngineDeps,
  scope: readonly string[],
  opts: { store?: StateStore; dryRun?: boolean; onProgress?: ApplyOptions['onProgress'] } = {},
): Promise<Outcome> {
  const planned = await planRun(deps, { prefer: 'remote', ...(opts.store ? { store: opts.store } : {}) })
  // A path that names no file and no server item is a typo, not "nothing to restore" (exit 2).
  try {
    checkScope(planned, scope)
  } catch (error) {
    await planned.media?.dispose()
    throw error
  }
  if (restoreLocalEdits(planned.plan.items, scope).length === 0) {
    await planned.media?.dispose()
    return { applied: [], conflicts: [], failed: [] }
  }
  return applyRun(deps, planned, {
    select: SELECT.resolve,
    scope,
    dryRun: opts.dryRun === true,
    // Deleting a file the server never had is what restoring it means; it goes to trash.
    allowDeletes: true,
    reportScanProblems: false,
    reportRemoteProblems: false,
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
  })
}

/** Held local changes under `scope` pushed on a person's word, deletions allowed (the caller lifts a pause). */
export async function releaseHeld(
  deps: EngineDeps,
  scope: readonly string[],
  opts: { store?: StateStore } = {},
): Promise<Outcome> {
  if (scope.length === 0) throw new CliError('name the held changes to push', ExitCode.usage)
  const planned = await planRun(deps, opts.store ? { store: opts.store } : {})
  return applyRun(deps, planned, {
    select: SELECT.push,
    scope,
    dryRun: false,
    allowDeletes: true,
    reportScanProblems: true,
    reportRemoteProblems: false,
    mergeWrites: 'remote',
  })
}
