// Pushes that landed on the server while their record in the state did not reach the disk
// (a kill -9 between the server's answer and the state's save). The push journal
// (state/push-journal.ts) holds what was sent; where the server now holds exactly that, it
// becomes the base, as the lost save would have recorded it. Without this the user's next
// edit of the same field was a conflict with their own push.
//
// Only an exact match counts: a server that holds anything else either never got the push or
// moved on since, and then the older base is all that is known.

import type { BaseStore } from '../state/base-store.js'
import { createDateOf, type StateStore } from '../state/state-file.js'
import { FOLDER_OF, type Kind } from '../workspace/kinds.js'
import type { RemoteEntry } from './remote-snapshot.js'

/** Adopts the landed pushes as bases; returns their paths. `kinds`: the kinds this plan listed. */
export async function adoptLandedPushes(
  store: StateStore,
  bases: BaseStore,
  remote: ReadonlyMap<string, RemoteEntry>,
  kinds: ReadonlySet<Kind>,
): Promise<string[]> {
  const journal = store.pushes
  if (!journal) return []
  const listedFolders = new Set([...kinds].map((kind) => `${FOLDER_OF[kind]}/`))
  const adopted: string[] = []
  for (const intent of journal.open()) {
    const listed = [...listedFolders].some((folder) => intent.path.startsWith(folder))
    if (!listed) continue
    journal.settle(intent)
    const entry = remote.get(intent.path)
    const known = store.get(intent.path)
    // A version-1 base compares in another form: left to the plan as it stands.
    if (!entry || entry.hash !== intent.hash || known?.baseHash === intent.hash) continue
    if (entry.bytes) await bases.keep(entry.bytes.hash, entry.bytes.text)
    store.adopt({
      kind: entry.kind,
      id: entry.id,
      path: entry.path,
      baseHash: intent.hash,
      remoteRev: entry.rev,
      // No stat: the next look at the file reads it.
      ...createDateOf(entry.object, known),
      ...(entry.inherited ? { inherited: true as const } : {}),
    })
    adopted.push(intent.path)
  }
  return adopted
}
