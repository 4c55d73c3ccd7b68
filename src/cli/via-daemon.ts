// `resolve` and `restore` while `cms-sync watch` holds the workspace: the daemon carries them
// out on its own state (src/watch/requests.ts), so the user types the same command either way.

import type { Command } from 'commander'
import type { Outcome } from '../engine/outcome.js'
import { CliError, type ExitCode } from '../errors/exit-codes.js'
import type { SettleRequest } from '../watch/requests.js'
import { openWorkspace } from './context.js'
import { scopeOf } from './engine-session.js'
import type { CliIo } from './io.js'

/** The daemon's outcome, or undefined when no `watch` holds the workspace (run it here then). */
export async function viaDaemon(
  io: CliIo,
  cmd: Command,
  paths: string[],
  request: Omit<SettleRequest, 'scope' | 'leaves'>,
  /** resolve on single leaves: a file and a JSON Pointer each. */
  leafArgs: ReadonlyArray<{ file: string; pointer: string }> = [],
): Promise<Outcome | undefined> {
  const ws = await openWorkspace(io, cmd)
  const { lockHolder } = await import('../state/lock.js')
  const holder = await lockHolder(ws.root)
  if (holder?.command !== 'watch') return undefined
  const scope = scopeOf(ws.globals.dir ? ws.root : io.cwd, ws.root, paths)
  const { askDaemon } = await import('../watch/requests.js')
  const base = ws.globals.dir ? ws.root : io.cwd
  const leaves: Record<string, string[]> = {}
  for (const { file, pointer } of leafArgs) {
    const [rel] = scopeOf(base, ws.root, [file])
    if (scope.includes(rel!)) continue // named whole as well: all of it is settled
    leaves[rel!] = [...(leaves[rel!] ?? []), pointer]
  }
  const reply = await askDaemon(ws.root, holder.pid, {
    ...request,
    scope,
    ...(leafArgs.length ? { leaves } : {}),
  })
  if (reply === undefined) return undefined // the daemon stopped meanwhile: run here
  if ('error' in reply) throw new CliError(reply.error.message, reply.error.exitCode as ExitCode)
  return reply.outcome
}
