// Runs the CLI in-process, as main.ts would, with captured output.

import { PassThrough } from 'node:stream'
import type { CliIo } from '../../src/cli/io.js'
import { run } from '../../src/cli/program.js'

export interface CliRun {
  exitCode: number
  stdout: string
  stderr: string
  json: unknown
}

export async function cli(
  argv: string[],
  opts: {
    cwd: string
    env?: NodeJS.ProcessEnv
    stdin?: string | NonNullable<CliIo['stdin']>
    /** Sees stderr as it is written (for answering prompts). */
    onStderr?: (chunk: string) => void
  },
): Promise<CliRun> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let out = ''
  let err = ''
  stdout.on('data', (c) => {
    out += String(c)
  })
  stderr.on('data', (c) => {
    err += String(c)
    opts.onStderr?.(String(c))
  })
  let stdin: CliIo['stdin']
  if (typeof opts.stdin === 'string') {
    const s = new PassThrough()
    s.end(opts.stdin)
    stdin = s
  } else stdin = opts.stdin
  const io: CliIo = {
    stdout,
    stderr,
    ...(stdin ? { stdin } : {}),
    env: opts.env ?? {},
    cwd: opts.cwd,
    stopSignal: new Promise(() => {}),
  }
  const exitCode = await run(argv, io)
  let json: unknown
  try {
    json = JSON.parse(out)
  } catch {
    json = undefined
  }
  return { exitCode, stdout: out, stderr: err, json }
}
