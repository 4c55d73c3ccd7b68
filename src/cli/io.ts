// Where a command prints. Tests pass their own streams and run commands in-process.

import type { Writable } from 'node:stream'

export interface CliIo {
  stdout: Writable
  stderr: Writable
  env: NodeJS.ProcessEnv
  cwd: string
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM); long-running commands await it. */
  stopSignal: Promise<void>
}
