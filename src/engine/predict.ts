// What a run would refuse, known before it runs: `status` and `--dry-run` tell CI the truth
// (design.md: status exits 1 when an item would fail). The same checks the executor makes just
// before a write (the file parses and validates, its references exist, a new content's parent
// is on the server or goes up first), and the deletes held for a file renamed by hand.

import { NATIVE_SCHEMA_IDS } from '../remote/dialect.js'
import type { ItemState, StateStore } from '../state/state-file.js'
import type { Codec, ReferenceContext } from '../workspace/codec.js'
import { itemPath } from '../workspace/layout.js'
import { readLocalFile } from '../workspace/local-file.js'
import { heldBy, unsyncedPaths } from '../workspace/scan.js'
import { deletesHeldByRenamedFiles, describeOrphaning } from './guards.js'
import { orphaningDeletes } from './orphans.js'
import type { PlanItem } from './plan.js'
import type { EngineDeps, PlannedRun } from './plan-apply-types.js'

function baseSchemas(store: StateStore): ItemState[] {
  return store.items('schema')
}

function heldSchemas(run: PlannedRun): ItemState[] {
  if (run.fresh) return baseSchemas(run.store)
  const held = heldBy(unsyncedPaths(run.scanProblems))
  return baseSchemas(run.store).filter((item) => held(item.path))
}

/** What pushed files are checked against: known only for the kinds being synced. */
export async function referenceContext(
  deps: EngineDeps,
  run: PlannedRun,
  selected: readonly PlanItem[],
): Promise<ReferenceContext> {
  // Schema ids are known only when schemas are synced too; otherwise the check is left to the server.
  const schemaIds = deps.codecs.some((codec) => codec.kind === 'schema')
    ? new Set([
        ...NATIVE_SCHEMA_IDS,
        // An edit-only run saw only its own paths: the schemas of the last sync stand for the rest;
        // so they do for schemas held out of the run (schemas/ a link, or a file in its place).
        ...[...run.remote.values(), ...run.local.values(), ...heldSchemas(run)]
          .filter((e) => e.kind === 'schema')
          .map((e) => e.id),
      ])
    : undefined
  // One request for the types, and only when a connection is about to be written.
  const pushesConnection = selected.some(
    (item) => item.kind === 'connection' && (item.action === 'push' || item.action === 'merge'),
  )
  const types =
    pushesConnection && deps.client.connectionTypes ? await deps.client.connectionTypes() : undefined
  return {
    schemaIds,
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
  const pushes = selected.filter((item) => item.action === 'push' && item.kind !== 'media')
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
    // The server refuses an item whose parent it does not hold; one that goes up in this run is fine.
    const parent = codec.parentOf(parsed.file)
    if (parent !== undefined && item.kind === 'content') {
      const parentPath = safeItemPath(item.kind, parent)
      if (parentPath === undefined || (!run.remote.has(parentPath) && !pushed.has(parentPath)))
        problems.push(
          `parentId: the parent ${JSON.stringify(parent)} is neither on the server nor pushed with this item`,
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
