// A base from cms-sync.lock is a claim about history ("revision R held this file"), and in a CI
// run on a pull request the lock is written by whoever wrote the pull request. Its word alone
// must not delete a server item or overwrite one: lines for items no commit ever held would
// delete them, a forged revision would hide an editor's change. So where a run would delete or
// overwrite on the lock's word, the line counts only when the file's own git history agrees:
// some committed version of the file has the line's hash. Otherwise the item is planned as one
// without a base (design.md: nothing is deleted without a base; different on both sides is a
// conflict). Only these items ask git, so a run that pushes nothing never starts it.

import type { StateStore } from '../state/state-file.js'
import type { Codec } from '../workspace/codec.js'
import type { LocalEntry } from '../workspace/scan.js'
import type { BaseFallback } from './merges.js'
import { decide, type PlanItem, type PlanOptions } from './plan.js'
import type { RemoteEntry } from './remote-snapshot.js'

/** What a run does to the server item on the word of its base. */
function overwritesServer(item: PlanItem, remote: ReadonlyMap<string, RemoteEntry>): boolean {
  return item.action === 'delete-remote' || (item.action === 'push' && remote.has(item.path))
}

/** Why an item was re-planned; `stateBase`: the local state's own base decided it instead. */
export function unprovenReason(path: string, stateBase = false): string {
  return (
    `no commit of ${path} holds the base cms-sync.lock gives it (a lock line edited by hand or ` +
    'forged, or history this clone lacks: a shallow clone, see docs/lock.md); planned ' +
    `${stateBase ? "against this workspace's own base alone" : 'as an item without a base'}, so ` +
    'nothing on the server is deleted or overwritten on its word'
  )
}

/**
 * Re-plans the deletes and overwrites that rest on a line of cms-sync.lock no committed version
 * of the file holds: as items without a base, or, where the local state has a base of its own,
 * as that base alone decides. `history` finds a committed version with the hash (git-base.ts);
 * without it (no git at hand) no such line is trusted.
 */
export async function distrustUnprovenLockBases(
  items: PlanItem[],
  store: StateStore,
  local: ReadonlyMap<string, LocalEntry>,
  remote: ReadonlyMap<string, RemoteEntry>,
  codecs: readonly Codec[],
  history: BaseFallback | undefined,
  opts: PlanOptions,
): Promise<string[]> {
  const distrusted: string[] = []
  for (const item of items) {
    if (!overwritesServer(item, remote)) continue
    const known = store.get(item.path)
    const localHash = local.get(item.path)?.hash
    const remoteHash = remote.get(item.path)?.hash
    // Without local state the lock's line is the base. With both (git moved the lock: a pull of
    // someone's commit), the planner took the lock's word where the state alone decides otherwise.
    const alternate = store.alternates.get(item.path)
    const lockLine = alternate ?? (known?.fromLock ? known : undefined)
    if (!lockLine) continue
    const withoutIt = alternate ? decide(known?.baseHash, localHash, remoteHash, opts) : undefined
    if (withoutIt?.action === item.action) continue
    const codec = codecs.find((c) => c.kind === item.kind)
    if (codec && history && (await history(item, lockLine.baseHash, codec, [])) !== undefined) continue
    const decision = withoutIt ?? decide(undefined, localHash, remoteHash, opts)
    item.local = decision.local
    item.remote = decision.remote
    item.action = decision.action
    if (decision.settledFor) item.settledFor = decision.settledFor
    else delete item.settledFor
    item.reason = unprovenReason(item.path, withoutIt !== undefined)
    distrusted.push(item.path)
  }
  return distrusted
}
