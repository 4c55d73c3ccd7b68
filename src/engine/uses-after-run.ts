// What each item names (Codec.uses: content its schema) once a run's pushes and deletes are done,
// for the guard that holds a delete of something still named (guards.ts deletesHeldByUse). Read
// only when the run deletes on the server an item of a kind others name.

import { readFile } from 'node:fs/promises'
import type { Codec, JsonObject } from '../workspace/codec.js'
import { absolute } from '../workspace/layout.js'
import type { UseAfterRun } from './guards.js'
import type { PlanItem } from './plan.js'
import type { PlannedRun } from './plan-apply-types.js'

/**
 * Per path of an item that names another, what it names once the chosen entries are carried out
 * (undefined: deleted, or naming nothing). A pushed file that cannot be read is left to the
 * executor to report.
 */
export async function usesAfterRun(
  root: string,
  codecs: readonly Codec[],
  run: Pick<PlannedRun, 'remote'>,
  chosen: readonly PlanItem[],
): Promise<Map<string, UseAfterRun | undefined>> {
  const after = new Map<string, UseAfterRun | undefined>()
  const deleted = new Set(chosen.filter((item) => item.action === 'delete-remote').map((item) => item.kind))
  for (const codec of codecs) {
    const uses = codec.uses
    if (!uses || !deleted.has(uses.kind)) continue
    const useOf = (object: unknown): UseAfterRun | undefined => {
      const id = typeof object === 'object' && object !== null ? uses.idOf(object as JsonObject) : undefined
      return id === undefined ? undefined : { by: codec.kind, kind: uses.kind, id }
    }
    for (const entry of run.remote.values())
      if (entry.kind === codec.kind) after.set(entry.path, useOf(entry.object))
    for (const item of chosen) {
      if (item.kind !== codec.kind) continue
      if (item.action === 'delete-remote') after.set(item.path, undefined)
      if (item.action !== 'push') continue
      try {
        after.set(item.path, useOf(JSON.parse(await readFile(absolute(root, item.path), 'utf8'))))
      } catch {
        // Unreadable or not JSON: it will not be pushed, so the server keeps what it has.
      }
    }
  }
  return after
}
