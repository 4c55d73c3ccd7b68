// The servers a workspace is bound to, read without parsing its records whole: the check before
// a command connects (cli/context.ts refuseUnboundServer) runs on every command, and parsing the
// state and lock of a large workspace whole costs the run that time twice (docs/benchmarks.md,
// "Figures behind code comments"). The state as
// cms-sync writes it starts with its target; the lock names its target on a line of its own.

import { open, readFile } from 'node:fs/promises'
import { LOCK_FILE, lockFilePath } from './committed-base.js'
import { legacyStatePath, loadState, lockSeenUnmoved, statePath } from './state-file.js'

export { sameServer } from './state-file.js'

export interface Binding {
  /** The record that binds: `.cms-sync/state/index.json` (or an older `.cms-sync/state.json`) or `cms-sync.lock`. */
  file: string
  server: string
}

/** `{"version":3,"target":{...},` with a target of string values, as the state's index (and the older state.json) begins. */
const STATE_HEAD = /^\{"version":\d+,"target":(\{(?:[^"{}]|"(?:[^"\\]|\\.)*")*\})/

const STATE_INDEX = '.cms-sync/state/index.json'

async function stateServer(root: string): Promise<{ file: string; server: string } | undefined> {
  for (const [file, where] of [
    [STATE_INDEX, statePath(root)],
    ['.cms-sync/state.json', legacyStatePath(root)],
  ] as const) {
    const server = await headServer(where)
    if (server === null) continue
    // Another layout (an older version, a hand edit): the whole state, as the run reads it.
    const read = server ?? (await loadState(root).catch(() => undefined))?.target.server
    return read === undefined ? undefined : { file, server: read }
  }
  return undefined
}

/** The server named at the head of a state file; null: no such file; undefined: not found there. */
async function headServer(file: string): Promise<string | null | undefined> {
  let head: string
  try {
    const handle = await open(file, 'r')
    try {
      const { buffer, bytesRead } = await handle.read({ buffer: Buffer.alloc(4096) })
      head = buffer.subarray(0, bytesRead).toString('utf8')
    } finally {
      await handle.close()
    }
  } catch {
    return null
  }
  const match = STATE_HEAD.exec(head)
  if (match) {
    const server = (JSON.parse(match[1]!) as { server?: unknown }).server
    if (typeof server === 'string') return server
  }
  return undefined
}

/** The id of the lock the state's last save wrote, as its index records it. */
async function indexLock(root: string): Promise<string | undefined> {
  try {
    const lock = (JSON.parse(await readFile(statePath(root), 'utf8')) as { lock?: unknown }).lock
    return typeof lock === 'string' ? lock : undefined
  } catch {
    return undefined
  }
}

async function lockServers(root: string, state: Binding | undefined): Promise<string[]> {
  // The lock the state's last save wrote, unmoved since (its stat says so), names the target the
  // state names: the lock of a large workspace (23 MB at 100,000 items) is then not read.
  if (state?.file === STATE_INDEX && lockSeenUnmoved(root, await indexLock(root))) return [state.server]
  const text = await readFile(lockFilePath(root), 'utf8').catch(() => '')
  const servers: string[] = []
  for (const line of text.split('\n')) {
    if (!line.includes('"lock"')) continue
    try {
      const value = JSON.parse(line) as Record<string, unknown>
      if (value !== null && 'lock' in value && typeof value.server === 'string') servers.push(value.server)
    } catch {
      // Not a target line; the run reports a broken lock.
    }
  }
  return servers
}

/** Each server the state and the lock bind the workspace to (none in a new workspace). */
export async function boundServers(root: string): Promise<Binding[]> {
  const state = await stateServer(root)
  const lock = await lockServers(root, state)
  return [...(state === undefined ? [] : [state]), ...lock.map((server) => ({ file: LOCK_FILE, server }))]
}
