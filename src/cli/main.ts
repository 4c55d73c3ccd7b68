#!/usr/bin/env node
import { run } from './program.js'

const stopSignal = new Promise<void>((resolve) => {
  process.once('SIGINT', () => resolve())
  process.once('SIGTERM', () => resolve())
})

const code = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  stopSignal,
})
// Commands close their own handles (sockets, watchers, timers), so the process ends by itself.
process.exitCode = code
