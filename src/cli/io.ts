// Where a command prints. Tests pass their own streams and run commands in-process.

import type { Readable, Writable } from 'node:stream'

export interface CliIo {
  stdout: Writable
  stderr: Writable
  /** For prompts and `--password-stdin`; absent means "no input" (as when stdin is closed). */
  stdin?: Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown }
  env: NodeJS.ProcessEnv
  cwd: string
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM); long-running commands await it. */
  stopSignal: Promise<void>
}
