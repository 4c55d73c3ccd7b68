// What a run would refuse, known before it runs: `status` and `--dry-run` tell CI the truth
// (design.md: status exits 1 when an item would fail). The same checks the executor makes just
// before a write (the file parses and validates, its references exist, a new content's parent
// is on the server or goes up first), and the deletes held for a file renamed by hand.

import type { ItemState } from '../state/state-file.js'
import type { Codec, ReferenceContext } from '../workspace/codec.js'
import { isBytes, type Kind } from '../workspace/kinds.js'
import { itemPath } from '../workspace/layout.js'
import { readLocalFile } from '../workspace/local-file.js'
import { heldBy, unsyncedPaths } from '../workspace/scan.js'
import { deletesHeldByRenamedFiles, describeOrphaning } from './guards.js'
import { orphaningDeletes } from './orphans.js'
import type { PlanItem } from './plan.js'
import type { EngineDeps, PlannedRun } from './plan-apply-types.js'

function heldItems(run: PlannedRun, kind: Kind): ItemState[] {
  const held = heldBy(unsyncedPaths(run.scanProblems))
  return run.store.items(kind).filter((item) => held(item.path))
}

/**
 * The ids of `kind` an edit-only run knows besides the ones it read: the items of the last sync
 * stand for the rest. Each is looked up where its file would be (one bucket of the state); only
 * an id not found there (a reference about to fail, or a file under another name) reads them all.
 */
function syncedIds(run: PlannedRun, kind: Kind): (id: string) => boolean {
  let all: Set<string> | undefined
  return (id) => {
    if (run.store.get(itemPath(kind, id))?.id === id) return true
    all ??= new Set(run.store.items(kind).map((item) => item.id))
    return all.has(id)
  }
}

/** What pushed files are checked against: known only for the kinds being synced. */
export async function referenceContext(
  deps: EngineDeps,
  run: PlannedRun,
  selected: readonly PlanItem[],
): Promise<ReferenceContext> {
  // The ids a kind's items may name (content: schemas) are known only when that kind is synced
  // too; otherwise the check is left to the server.
  const ids: NonNullable<ReferenceContext['ids']> = {}
  for (const { uses } of deps.codecs) {
    const named = uses && deps.codecs.find((codec) => codec.kind === uses.kind)
    if (!named || ids[named.kind]) continue
    const seen = new Set(
      // A full run read every item but those it holds out (schemas/ a link, or a file in its
      // place): the last sync stands for these.
      [...run.remote.values(), ...run.local.values(), ...(run.fresh ? [] : heldItems(run, named.kind))]
        .filter((e) => e.kind === named.kind)
        .map((e) => e.id),
    )
    for (const id of named.builtInIds ?? []) seen.add(id)
    const synced = run.fresh ? syncedIds(run, named.kind) : undefined
    ids[named.kind] = { has: (id) => seen.has(id) || synced?.(id) === true }
  }
  // One request for the types, and only when an item that checks them (a connection) is about
  // to be written.
  const checksTypes = new Set(
    deps.codecs.filter((codec) => codec.checksServerTypes).map((codec) => codec.kind),
  )
  const pushesTyped = selected.some(
    (item) => checksTypes.has(item.kind) && (item.action === 'push' || item.action === 'merge'),
  )
  const types = pushesTyped && deps.client.connectionTypes ? await deps.client.connectionTypes() : undefined
  return {
    ids,
    ...(types ? { deployers: new Set(types.deployers), processors: new Set(types.processors) } : {}),
  }
}

/**
 * The entries of `selected` that would fail, by path, with the reason the run would give. Reads
 * only the files about to be pushed (a handful in a run that changes little).
 */
export async function predictFailures(
  deps: EngineDeps,
  run: PlannedRun,
  selected: readonly PlanItem[],
): Promise<Map<string, string>> {
  const failures = new Map<string, string>()
  for (const [path, why] of deletesHeldByRenamedFiles(selected, run.local.values())) failures.set(path, why)
  for (const [path, children] of await orphaningDeletes(deps, run, selected))
    failures.set(path, `refused: ${describeOrphaning(path, children)}; delete or move them in the same run`)
  const pushes = selected.filter((item) => item.action === 'push' && !isBytes(item.kind))
  if (pushes.length === 0) return failures
  const references = await referenceContext(deps, run, selected)
  const pushed = new Set(pushes.map((item) => item.path))
  for (const item of pushes) {
    const known = run.local.get(item.path)?.problems
    if (known) {
      failures.set(item.path, known.join('; '))
      continue
    }
    const codec = deps.codecs.find((c) => c.kind === item.kind) as Codec
    const parsed = await readLocalFile(deps.root, item.path, codec, item.id)
    if (!parsed) continue
    if (!parsed.ok) {
      failures.set(item.path, parsed.problems.join('; '))
      continue
    }
    const problems = codec.checkReferences(parsed.file, references)
    // The server refuses an item of a tree (Codec.parentField) whose parent it does not hold;
    // one that goes up in this run is fine.
    const parent = codec.parentOf(parsed.file)
    if (parent !== undefined && codec.parentField !== undefined) {
      const parentPath = safeItemPath(item.kind, parent)
      if (parentPath === undefined || (!run.remote.has(parentPath) && !pushed.has(parentPath)))
        problems.push(
          `${codec.parentField}: the parent ${JSON.stringify(parent)} is neither on the server nor pushed with this item`,
        )
    }
    if (problems.length > 0) failures.set(item.path, problems.join('; '))
  }
  return failures
}

function safeItemPath(kind: PlanItem['kind'], id: string): string | undefined {
  try {
    return itemPath(kind, id)
  } catch {
    return undefined
  }
}
