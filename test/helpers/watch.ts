// `cms-sync watch` for end-to-end tests: in-process (fast, with a stop promise) or as a real
// `node dist/cli/main.js watch` process (signals, kill -9, two daemons). Both run with --json,
// so the test reads the same ndjson events a user's script would.

import { type ChildProcess, spawn } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { run } from '../../src/cli/program.js'
import type { RemoteClient } from '../../src/remote/index.js'
import { waitFor } from '../watch/helpers.js'
import { MAIN_JS } from './build.js'

// biome-ignore lint/suspicious/noExplicitAny: test convenience for parsed ndjson events
export type Event = Record<string, any>

/** Sets watch timings in the workspace's cms-sync.yaml (poll every second unless told). */
export async function setWatchConfig(
  root: string,
  watch = { debounceMs: 50, pollSeconds: 1 },
): Promise<void> {
  const file = path.join(root, 'cms-sync.yaml')
  const text = (await readFile(file, 'utf8')).replace(/^watch:.*\n/m, '')
  await writeFile(
    file,
    `${text}watch: { debounceMs: ${watch.debounceMs}, pollSeconds: ${watch.pollSeconds} }\n`,
  )
}

function eventLog() {
  const events: Event[] = []
  let buffer = ''
  return {
    events,
    feed(chunk: string) {
      buffer += chunk
      let nl = buffer.indexOf('\n')
      while (nl >= 0) {
        const line = buffer.slice(0, nl)
        buffer = buffer.slice(nl + 1)
        // One event per line; a stopped run's --json error document is pretty-printed, not an event.
        if (line.trim().startsWith('{"')) events.push(JSON.parse(line))
        nl = buffer.indexOf('\n')
      }
    },
  }
}

export interface Watching {
  events: Event[]
  stderr: () => string
  /** Waits for an event matching all the given fields; returns it. */
  waitForEvent(fields: Event, timeoutMs?: number): Promise<Event>
}

function matcher(events: Event[]) {
  return async (fields: Event, timeoutMs = 8_000) => {
    const match = (e: Event) => Object.entries(fields).every(([k, v]) => e[k] === v)
    await waitFor(() => events.some(match), { timeoutMs, what: `event ${JSON.stringify(fields)}` })
    return events.find(match)!
  }
}

/** `cms-sync --json -C root watch` in this process; stop() resolves with its exit code. */
export function watchInProcess(root: string, env: NodeJS.ProcessEnv, args: string[] = []) {
  const log = eventLog()
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let err = ''
  stdout.on('data', (c) => log.feed(String(c)))
  stderr.on('data', (c) => {
    err += String(c)
  })
  let stop: () => void = () => {}
  const stopSignal = new Promise<void>((resolve) => {
    stop = resolve
  })
  const exit = run(['--json', '-C', root, 'watch', ...args], { stdout, stderr, env, cwd: root, stopSignal })
  const watching: Watching & { exit: Promise<number>; stop(): Promise<number> } = {
    events: log.events,
    stderr: () => err,
    waitForEvent: matcher(log.events),
    exit,
    stop: () => {
      stop()
      return exit
    },
  }
  return watching
}

/**
 * `watch` in process on a workspace (debounce 50 ms, a remote poll every `pollSeconds`), returned
 * once its start-up reconcile is done ('ready' comes before it); its stop goes into `cleanups`.
 */
export async function watchReconciled(
  w: { root: string; env: NodeJS.ProcessEnv },
  cleanups: Array<() => Promise<unknown>>,
  pollSeconds = 1,
) {
  await setWatchConfig(w.root, { debounceMs: 50, pollSeconds })
  const d = watchInProcess(w.root, w.env)
  cleanups.push(() => d.stop())
  await d.waitForEvent({ event: 'reconciled' })
  return d
}

/** A real `node dist/cli/main.js --json watch` process in root. */
export function watchProcess(root: string, env: NodeJS.ProcessEnv, args: string[] = []) {
  const log = eventLog()
  let err = ''
  const child: ChildProcess = spawn(process.execPath, [MAIN_JS, '--json', 'watch', ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout?.on('data', (c) => log.feed(String(c)))
  child.stderr?.on('data', (c) => {
    err += String(c)
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  return {
    child,
    events: log.events,
    stderr: () => err,
    waitForEvent: matcher(log.events),
    exited,
    /** SIGTERM (unless it has ended already), then its exit. */
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

/** properties.title of a content on the server (undefined when it is not there). */
export async function serverTitle(client: RemoteClient, id: string): Promise<string | undefined> {
  return ((await client.get('content', id))?.properties as { title?: string } | undefined)?.title
}
