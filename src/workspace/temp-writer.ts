// Small files are written by a thread of their own. Creating a file is the slowest call of a
// pull: open(O_CREAT) took 250-700 µs here (a new inode, the journal), 3.7 s of a 12,200-file
// pull's main thread, which meanwhile could not parse, hash or read its sockets. One worker
// thread makes the files one after the other while the main thread goes on; a message each way
// costs less than a trip through the thread pool per call (open, write, stat, close, link,
// unlink). Only this thread touches a folder it creates in, so the calls do not queue on the
// folder's lock: with the link() left on the main thread, system CPU rose by half.
//
// The worker runs the plain JavaScript below: a worker thread has no TypeScript loader, in the
// tests or in the bundle. It writes `<target>.<number>` with O_EXCL, then, when asked to claim
// the name, links it to `target` (which fails if anything holds that name) and removes the temp
// name. Everything else (a name taken, no hard links here) is left to atomic-write.ts.

import { Worker } from 'node:worker_threads'
import type { StatSnapshot } from '../state/state-file.js'

const WORKER_SOURCE = `
const { closeSync, fstatSync, linkSync, openSync, rmSync, unlinkSync, writeFileSync } = require('node:fs')
const { parentPort } = require('node:worker_threads')
parentPort.on('message', ({ id, target, text, mode, suffix, claim }) => {
  let temp = ''
  let fd
  try {
    for (let n = suffix; ; n++) {
      temp = target + '.' + n
      try {
        fd = openSync(temp, 'wx', mode)
        break
      } catch (error) {
        if (error.code !== 'EEXIST') throw error
      }
    }
    writeFileSync(fd, text)
    const info = fstatSync(fd)
    closeSync(fd)
    fd = undefined
    const stat = { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino }
    if (claim) {
      try {
        linkSync(temp, target)
      } catch (error) {
        parentPort.postMessage({ id, temp, stat, linkError: error.code ?? 'unknown' })
        return
      }
      unlinkSync(temp)
    }
    parentPort.postMessage({ id, temp, stat })
  } catch (error) {
    if (fd !== undefined) closeSync(fd)
    if (temp) rmSync(temp, { force: true })
    const { message, code, syscall, path } = error
    parentPort.postMessage({ id, error: { message, code, syscall, path } })
  }
})
`

export interface ThreadWrite {
  /** The temp file's name: gone once claimed, else the caller's to rename or remove. */
  temp: string
  /** The stat of the written file, from its open handle. */
  stat: StatSnapshot
  /** Asked to claim, the link() failed with this code; the temp file is still there. */
  linkError?: string
}

interface Reply extends Partial<ThreadWrite> {
  id: number
  error?: { message: string; code?: string; syscall?: string; path?: string }
}

type Pending = { resolve: (written: ThreadWrite) => void; reject: (error: Error) => void }

let worker: Worker | undefined
const pending = new Map<number, Pending>()
let lastId = 0

function writerThread(): Worker {
  if (worker) return worker
  const thread = new Worker(WORKER_SOURCE, { eval: true })
  thread.on('message', (reply: Reply) => {
    const waiting = pending.get(reply.id)
    if (!waiting) return
    pending.delete(reply.id)
    // Only a thread with work in hand keeps the process alive.
    if (pending.size === 0) thread.unref()
    if (reply.error) waiting.reject(Object.assign(new Error(reply.error.message), reply.error))
    else
      waiting.resolve({
        temp: reply.temp!,
        stat: reply.stat!,
        ...(reply.linkError ? { linkError: reply.linkError } : {}),
      })
  })
  thread.on('error', (error) => failAll(thread, error))
  thread.on('exit', (code) =>
    failAll(thread, new Error(`the file writer thread stopped (exit code ${code})`)),
  )
  worker = thread
  return thread
}

/** A thread that died fails what it held; the next write starts a new one. */
function failAll(thread: Worker, error: Error): void {
  if (worker !== thread) return
  worker = undefined
  for (const waiting of pending.values()) waiting.reject(error)
  pending.clear()
}

/**
 * Writes `text` to a new `<target>.<number>` (the first free number from `suffix` on), with
 * `mode` before the umask. With `claim`, then gives it the name `target` with link().
 */
export function writeOnThread(
  target: string,
  text: string,
  opts: { mode: number; suffix: number; claim: boolean },
): Promise<ThreadWrite> {
  const thread = writerThread()
  const id = ++lastId
  thread.ref()
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject })
    thread.postMessage({ id, target, text, ...opts })
  })
}
