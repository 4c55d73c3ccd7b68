#!/usr/bin/env node
import { commandNamed, reportInternalError, run } from './program.js'

const argv = process.argv.slice(2)

/**
 * Commands that end themselves on a stop signal: watch and the emulator shut down (exit 0);
 * pull, push and sync stop between items and give an account (exit 130). Known from the command
 * line, so a signal that comes while the command's modules still load is theirs too.
 */
const STOPS_ITSELF = new Set(['watch', 'emulator', 'pull', 'push', 'sync'])

// SIGINT/SIGTERM: a command that reads io.stopSignal stops gracefully on the first one and a
// second one means "now"; any other command ends at once (128 + signal number), as a one-shot
// tool should. The listeners stay for the life of the process: with `once`, signal-exit (loaded
// by proper-lockfile) would find itself the last listener and re-raise the signal, killing a
// daemon that had shut down cleanly.
let graceful = STOPS_ITSELF.has(commandNamed(argv) ?? '')
let stopRequested = false
const stopSignal = new Promise<void>((resolve) => {
  const onSignal = (signal: NodeJS.Signals) => {
    if (!graceful || stopRequested) process.exit(signal === 'SIGINT' ? 130 : 143)
    stopRequested = true
    resolve()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
})

// A reader that went away (`cms-sync diff | head -1`) is not a failure of ours: the rest of the
// output has nowhere to go, so it is dropped and the command finishes its work as usual (a
// pull cut off half-way would be worse than one that completes unseen).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return
    throw error
  })
}

const io = {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  get stopSignal() {
    graceful = true
    return stopSignal
  },
}

// An error nothing caught (a callback's, a promise nobody awaited) is a bug of ours like any
// internal error: its stack goes to the workspace log, the terminal names the log, and the
// process ends with exit 1, as Node would end it.
let crashing = false
process.on('uncaughtException', (error) => {
  if (crashing) process.exit(1)
  crashing = true
  process.exitCode = 1
  void reportInternalError(io, argv, error)
    .catch(() => {})
    .finally(() => process.exit(1))
})

const code = await run(argv, io)
// Commands close their own handles (sockets, watchers, timers), so the process ends by itself.
process.exitCode = code
