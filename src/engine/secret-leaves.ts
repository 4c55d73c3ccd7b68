// A connection's secret is a leaf like any other, except that its value is in no file: the file
// holds a `${NAME}` reference, and the revision of a connection is taken with its secrets masked.
// So an editor who rotates a password on the server changes nothing the planner sees, and a push
// of an unrelated edit of that connection would send the variable's value back over it. Before
// anything is written, each connection a run would write to the server is compared leaf by leaf
// with its variables: a secret the server holds differently is a conflict of that leaf, unless a
// side was chosen (--prefer local sends the variable's value; --prefer remote keeps the server's).
// No base of a secret is kept anywhere (that would put a secret, or a hash of one, on disk), so
// which side changed cannot be told: they agree, or it is a conflict.

import type { Codec } from '../workspace/codec.js'
import { readLocalFile } from '../workspace/local-file.js'
import type { ConflictLeaf } from './merge/merge-json.js'
import type { PlanItem, Side } from './plan.js'
import type { RemoteEntry } from './remote-snapshot.js'

/** Turns the writes of connections whose secrets differ from the server's into conflicts, in place. */
export async function settleSecretLeaves(
  root: string,
  codecs: readonly Codec[],
  items: PlanItem[],
  remote: ReadonlyMap<string, RemoteEntry>,
  prefer: Side | undefined,
): Promise<void> {
  const codec = codecs.find((c) => c.secretsDiffering !== undefined)
  if (!codec || prefer === 'local') return
  for (const item of items) {
    if (item.kind !== codec.kind || (item.action !== 'push' && item.action !== 'merge')) continue
    const server = remote.get(item.path)?.object
    if (!server) continue
    const parsed = await readLocalFile(root, item.path, codec, item.id)
    if (!parsed?.ok) continue
    const differing = codec.secretsDiffering!(parsed.file, server)
    if (differing.length === 0) continue
    if (prefer === 'remote') {
      item.keepServerSecrets = true
      continue
    }
    const leaves: ConflictLeaf[] = differing.map(({ path, name }) => ({
      path: `/${path.split('.').join('/')}`,
      local: `\${${name}}`,
      remote: `a secret other than \${${name}}`,
    }))
    item.action = 'conflict'
    item.remote = 'modified'
    item.leaves = [...(item.leaves ?? []), ...leaves]
    item.reason = `${differing.map((d) => d.path).join(', ')}: the server holds another secret than ${differing.map((d) => `\${${d.name}}`).join(', ')} (changed on the server, or the variable is stale); set the variable to the server's value, or settle it with --prefer remote (the server's secret stays) or --prefer local (the variable's value is sent)`
  }
}
