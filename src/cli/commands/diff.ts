// `cms-sync diff [paths...]`: a unified diff of the server copy (---) against the local file
// (+++) for every changed item, so people see what a push or pull would do.

import { readFile } from 'node:fs/promises'
import type { Command } from 'commander'
import type { ConflictLeaf } from '../../engine/merge/merge-json.js'
import { printable } from '../../util/printable.js'
import { type Codec, fileBytes } from '../../workspace/codec.js'
import { isBytes } from '../../workspace/kinds.js'
import { absolute } from '../../workspace/layout.js'
import { parseFileText } from '../../workspace/local-file.js'
import { globalOptions, printJson } from '../context.js'
import { withEngine } from '../engine-session.js'
import type { CliIo } from '../io.js'
import { leafLines } from '../run-report.js'

/** The local file in canonical form when it parses, so only real edits show; else as written. */
async function localText(root: string, path: string, codec: Codec, id: string): Promise<string> {
  const text = await readFile(absolute(root, path), 'utf8').catch(() => '')
  const parsed = parseFileText(codec, text, id, path)
  return parsed.ok ? parsed.text : text
}

export function register(program: Command, io: CliIo): void {
  program
    .command('diff')
    .description('Show a unified diff of the server copy and the local file for changed items')
    .argument('[paths...]', 'only these files or folders')
    .action(async (paths: string[], _opts: object, cmd: Command) => {
      const globals = globalOptions(cmd)
      const { planRun, inScope, checkScope } = await import('../../engine/plan-and-apply.js')
      const { changesOf } = await import('../../engine/plan.js')
      const { fullObject } = await import('../../engine/remote-snapshot.js')
      const { unifiedDiff } = await import('../../engine/line-diff.js')
      await withEngine(io, cmd, paths, { lock: false }, async ({ deps, scope }) => {
        const planned = await planRun(deps, {})
        await planned.media?.dispose()
        checkScope(planned, scope)
        const diffs: { path: string; action: string; diff: string; leaves?: ConflictLeaf[] }[] = []
        for (const item of changesOf(planned.plan).filter((i) => inScope(i.path, scope))) {
          if (isBytes(item.kind)) {
            // Bytes, not lines: say what differs, as git does for binary files.
            const move = item.from ? `${item.from} -> ` : ''
            diffs.push({
              path: item.path,
              action: item.action,
              diff: `Media ${printable(`${move}${item.path}`)} differ (${item.action})\n`,
            })
            continue
          }
          if (item.action === 'publish' || item.action === 'unpublish') {
            // No text of its own: the deployment that follows (or precedes) the item's write.
            const through = item.publishing?.connection
            diffs.push({
              path: item.path,
              action: item.action,
              diff: `${item.action} ${item.path} (${through ? `through connection "${through}"` : 'no connection named'})\n`,
            })
            continue
          }
          const codec = deps.codecs.find((c) => c.kind === item.kind)!
          const entry = planned.remote.get(item.path)
          const object = entry ? await fullObject(deps.client, entry) : undefined
          const remote = object ? fileBytes(codec.toFile(object)).text : ''
          const local = planned.local.has(item.path)
            ? await localText(deps.root, item.path, codec, item.id)
            : ''
          const diff = unifiedDiff(
            remote,
            local,
            object ? `remote/${printable(item.path)}` : '/dev/null',
            local ? `local/${printable(item.path)}` : '/dev/null',
          )
          diffs.push({
            path: item.path,
            action: item.action,
            diff,
            ...(item.leaves?.length ? { leaves: item.leaves } : {}),
          })
        }
        if (globals.json) printJson(io, { diffs })
        else
          for (const d of diffs) {
            io.stdout.write(d.diff)
            // A both-changed item: which leaves conflict (the rest would merge).
            if (d.leaves)
              io.stdout.write(
                `conflicting leaves of ${printable(d.path)}:\n${leafLines(d.leaves).join('\n')}\n`,
              )
          }
      })
    })
}
