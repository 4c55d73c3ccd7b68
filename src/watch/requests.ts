// Commands the daemon carries out for the CLI while it holds the workspace lock (`resolve`;
// design.md: "settles conflicts (also while watch runs)"). Taking the lock over would leave the
// daemon's in-memory state behind the state file; carrying the command out on that state,
// between two of its runs, keeps one writer.
//
// The channel is a folder: the CLI writes .cms-sync/requests/<id>.json (atomically), the daemon
// notices it (fs.watch on that folder; a sweep every minute as a net, every 2 s once the watch failed), carries it out and writes
// <id>.reply.json, which the CLI reads and removes. The folder is not only ours, though: a git
// checkout writes whatever a branch holds there (a colleague's branch with `.cms-sync/` committed
// past .gitignore), and such a request would settle conflicts for the user, pushing their side
// over an editor's. So each daemon makes a key when it starts (`key`, beside the requests; never
// committed, and a checkout does not overwrite a file git does not track), the CLI sends it with
// its request, and a request without it is answered with an error and never carried out.

import { randomBytes, timingSafeEqual } from 'node:crypto'
import { watch as watchFolder } from 'node:fs'
import { mkdir, readdir, readFile, rm } from 'node:fs/promises'
import type { Outcome } from '../engine/outcome.js'
import type { Side } from '../engine/plan.js'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import { writeFileAtomically } from '../util/atomic-write.js'
import { syncDirPath } from '../workspace/layout.js'

export interface SettleRequest {
  /** `again`: push --again (the leaves an editor's stale save reverted go back and are pushed). */
  command: 'resolve' | 'restore' | 'again'
  /** Workspace-relative paths (or folders). */
  scope: string[]
  keep: Side
  /** resolve on single leaves: JSON Pointers per file (the file need not be in `scope`). */
  leaves?: Record<string, string[]>
}

export type SettleReply = { outcome: Outcome } | { error: { message: string; exitCode: number } }

const REQUEST = /^(\d+-[0-9a-f]+)\.json$/
/**
 * How often the daemon looks for requests fs.watch did not report. While the folder's watch
 * works it reports every request (one inotify watch on a folder only cms-sync writes to), so the
 * sweep is only a net, and a slow one: a quiet daemon wakes for its polls, not for this. Once the
 * watch failed, the sweep is how requests are found, so it comes often.
 */
const NET_SWEEP_MS = 60_000
const SWEEP_MS = 2_000

function requestsDir(root: string): string {
  return syncDirPath(root, 'requests')
}

/**
 * A request file's fields. cms-sync writes its requests whole (temp file and rename), so one that
 * does not parse was written by someone else (git checking out a branch writes in place, and may
 * be caught half-way): it carries no key and is refused like any foreign request.
 */
function parsedRequest(text: string): { key?: unknown } & Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/** The running daemon's key: only a request that carries it is carried out. */
const KEY_FILE = 'key'

function sameKey(given: unknown, key: string): boolean {
  if (typeof given !== 'string') return false
  const a = Buffer.from(given)
  const b = Buffer.from(key)
  return a.length === b.length && timingSafeEqual(a, b)
}

const FOREIGN =
  "a request file without the running daemon's key (one cms-sync did not write here, e.g. from a git checkout of a branch that commits .cms-sync/) was not carried out"

function isRequest(value: unknown): value is SettleRequest {
  const r = value as Partial<SettleRequest> | null
  return (
    typeof r === 'object' &&
    r !== null &&
    (r.command === 'resolve' || r.command === 'restore' || r.command === 'again') &&
    Array.isArray(r.scope) &&
    r.scope.every((p) => typeof p === 'string') &&
    (r.keep === 'local' || r.keep === 'remote') &&
    (r.leaves === undefined ||
      (typeof r.leaves === 'object' &&
        r.leaves !== null &&
        Object.values(r.leaves).every((l) => Array.isArray(l) && l.every((p) => typeof p === 'string'))))
  )
}

/**
 * The daemon's side: carries out each request with `handle` (one at a time, in the order they
 * came) until the returned function is called.
 */
export async function serveRequests(
  root: string,
  handle: (request: SettleRequest) => Promise<SettleReply>,
): Promise<() => void> {
  const dir = requestsDir(root)
  await mkdir(dir, { recursive: true })
  const key = randomBytes(32).toString('hex')
  await writeFileAtomically(`${dir}/${KEY_FILE}`, key, { mode: 0o600 })
  const seen = new Set<string>()
  let chain = Promise.resolve()
  let closed = false

  const take = (name: string) => {
    const id = REQUEST.exec(name)?.[1]
    if (!id || seen.has(id) || closed) return
    seen.add(id)
    chain = chain.then(async () => {
      let reply: SettleReply
      try {
        const { key: given, ...value } = parsedRequest(await readFile(`${dir}/${id}.json`, 'utf8'))
        if (!sameKey(given, key)) {
          // Not ours to remove either: git's file, if it came with a checkout.
          await writeFileAtomically(
            `${dir}/${id}.reply.json`,
            JSON.stringify({ error: { message: FOREIGN, exitCode: ExitCode.usage } }),
          )
          return
        }
        reply = isRequest(value)
          ? await handle(value)
          : { error: { message: 'the request to the watch daemon was not understood', exitCode: 2 } }
      } catch (error) {
        const e = error as Error & { exitCode?: number }
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return // taken back by its sender
        reply = { error: { message: e.message, exitCode: typeof e.exitCode === 'number' ? e.exitCode : 1 } }
      }
      await rm(`${dir}/${id}.json`, { force: true })
      await writeFileAtomically(`${dir}/${id}.reply.json`, JSON.stringify(reply))
    })
  }
  const sweep = async () => {
    for (const name of await readdir(dir).catch(() => [] as string[])) take(name)
  }
  const sweepEvery = (ms: number) => {
    clearInterval(timer)
    timer = setInterval(() => void sweep(), ms)
    timer.unref()
  }
  let timer: NodeJS.Timeout | undefined
  // The folder's watch first: when it cannot start (it throws), no sweep is left running.
  const watcher = watchFolder(dir, (_event, name) => {
    if (name) take(String(name))
  })
  sweepEvery(NET_SWEEP_MS)
  watcher.on('error', () => {
    // No more events: the sweep finds requests from now on.
    sweepEvery(SWEEP_MS)
    void sweep()
  })
  await sweep()
  return () => {
    closed = true
    clearInterval(timer)
    watcher.close()
    void rm(`${dir}/${KEY_FILE}`, { force: true })
  }
}

/**
 * The CLI's side: asks the daemon (pid `daemonPid`) to carry out `request` and waits for its
 * reply. Undefined when the daemon ended before answering: the caller may then run the command
 * itself.
 */
export async function askDaemon(
  root: string,
  daemonPid: number,
  request: SettleRequest,
  opts: { timeoutMs?: number } = {},
): Promise<SettleReply | undefined> {
  const dir = requestsDir(root)
  await mkdir(dir, { recursive: true })
  const id = `${process.pid}-${Date.now().toString(16)}`
  const replyFile = `${dir}/${id}.reply.json`
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000)
  let sent = false
  try {
    for (;;) {
      if (!sent) {
        // The daemon's key, where it wrote it; a daemon still starting has none yet: wait for it.
        const key = await readFile(`${dir}/${KEY_FILE}`, 'utf8').catch(() => undefined)
        if (key !== undefined) {
          await writeFileAtomically(`${dir}/${id}.json`, JSON.stringify({ ...request, key }))
          sent = true
        }
      }
      const text = sent ? await readFile(replyFile, 'utf8').catch(() => undefined) : undefined
      if (text !== undefined) return JSON.parse(text) as SettleReply
      let alive = true
      try {
        process.kill(daemonPid, 0)
      } catch (error) {
        alive = (error as NodeJS.ErrnoException).code === 'EPERM'
      }
      if (!alive) return undefined
      if (Date.now() > deadline)
        throw new CliError(
          `\`cms-sync watch\` (pid ${daemonPid}) did not carry out the ${request.command} within ${Math.round((opts.timeoutMs ?? 120_000) / 1000)} s; stop it (Ctrl-C) and run the command again`,
          ExitCode.locked,
        )
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  } finally {
    await rm(`${dir}/${id}.json`, { force: true })
    await rm(replyFile, { force: true })
  }
}
