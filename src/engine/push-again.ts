// `cms-sync push --again [paths...]`: the leaves an editor's stale save put back (own-pushes.ts)
// go back into the files, with our pushed values, and the push that follows sends them. Only
// the reverted leaves: whatever else the editor changed in that save stays as the server has it.

import { readFile } from 'node:fs/promises'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import { RecentPushes } from '../state/recent-pushes.js'
import { fileBytes, type JsonObject } from '../workspace/codec.js'
import { absolute } from '../workspace/layout.js'
import { LocalWriter } from '../workspace/local-writes.js'
import { withOurLeaves } from './own-pushes.js'
import { inScope } from './plan-apply-types.js'

/** Rewrites each reverted file under `scope`; returns their paths. Run under the workspace lock. */
export async function putBackReverted(
  root: string,
  scope: readonly string[],
  runId: string,
): Promise<string[]> {
  const recent = await RecentPushes.load(root)
  const chosen = recent.reverted().filter(([path]) => inScope(path, scope))
  if (chosen.length === 0)
    throw new CliError(
      `nothing${scope.length ? ` under ${scope.join(', ')}` : ''} was reverted on the server since our push (\`cms-sync status\` lists what was)`,
      ExitCode.usage,
    )
  // The file as it is now (the server's version, pulled) goes to trash as any overwritten file.
  const writer = new LocalWriter(root, runId)
  for (const [path, push] of chosen) {
    let file: JsonObject
    try {
      file = JSON.parse(await readFile(absolute(root, path), 'utf8')) as JsonObject
    } catch (error) {
      throw new CliError(
        `${path}: cannot put our pushed values back (${(error as Error).message}); nothing was changed`,
      )
    }
    const bytes = fileBytes(withOurLeaves(file, push.reverted.leaves) as JsonObject)
    await writer.write(path, bytes.text, bytes.hash)
  }
  return chosen.map(([path]) => path)
}
