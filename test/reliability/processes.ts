// Real processes for the crash tests: the emulator as a child (so it can be killed with
// SIGKILL and restarted on the same port and data folder) and the built CLI (dist/cli/main.js).

import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import path from 'node:path'

export const MAIN = path.resolve('dist/cli/main.js')

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

export interface Finished {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs the CLI (with `stdin` as its input, if given); resolves when the process is gone (exited or killed). */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin?: string,
): { child: ChildProcess; done: Promise<Finished> } {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, ...env, NO_COLOR: '1' },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  })
  if (stdin !== undefined) child.stdin!.end(stdin)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (c) => {
    stdout += String(c)
  })
  child.stderr!.on('data', (c) => {
    stderr += String(c)
  })
  const done = new Promise<Finished>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  )
  return { child, done }
}

export class EmulatorProcess {
  child: ChildProcess | undefined
  kills = 0
  constructor(
    readonly port: number,
    readonly dataDir: string,
    readonly dialect: string,
    readonly user = 'admin:crash-test-pw',
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  async start(): Promise<void> {
    const { child, done } = runCli(
      [
        'emulator',
        '--port',
        String(this.port),
        '--data',
        this.dataDir,
        '--dialect',
        this.dialect,
        '--user',
        this.user,
      ],
      {},
    )
    this.child = child
    await new Promise<void>((resolve, reject) => {
      let seen = ''
      child.stdout!.on('data', (c) => {
        seen += String(c)
        if (seen.includes('listening on')) resolve()
      })
      void done.then((f) => reject(new Error(`the emulator stopped before listening: ${f.stderr}`)))
    })
  }

  /** kill -9, and wait until the process is gone. */
  async kill(): Promise<void> {
    if (await this.end('SIGKILL')) this.kills++
  }

  async stop(): Promise<void> {
    await this.end('SIGTERM')
  }

  private async end(signal: NodeJS.Signals): Promise<boolean> {
    const child = this.child
    if (!child || child.exitCode !== null || child.signalCode !== null) return false
    const gone = new Promise((resolve) => child.once('close', resolve))
    child.kill(signal)
    await gone
    this.child = undefined
    return true
  }
}
