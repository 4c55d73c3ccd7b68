// The shipped program (dist/cli/main.js, the esbuild bundle `bin` points at) as a user runs it:
// a child process with pipes, a pseudo-terminal, or a stdout pipe its reader closes early.
// The in-process helper (cli.ts) runs the TypeScript sources through vitest's loader, which
// hides what only the bundle does (code splitting, CommonJS interop, stdout being a real
// stream); every command also runs here once (test/cli/shipped-commands.test.ts).

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { MAIN_JS } from './build.js'

export interface BuiltRun {
  /** Exit code; null when a signal ended the process. */
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  // biome-ignore lint/suspicious/noExplicitAny: test convenience for parsed --json output
  json: any
}

export interface BuiltOptions {
  cwd: string
  /** Added to a clean environment (PATH, HOME and NO_COLOR are kept). */
  env?: NodeJS.ProcessEnv
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  stdin?: string
  timeoutMs?: number
}

function baseEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...(process.env.SYSTEMROOT ? { SYSTEMROOT: process.env.SYSTEMROOT } : {}),
    ...extra,
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A started `node dist/cli/main.js ...args`, for a test that acts while it runs (a signal). */
export interface StartedBuilt {
  child: ChildProcessWithoutNullStreams
  /** The whole run, once the process has closed its pipes. */
  done: Promise<BuiltRun>
}

/** `node dist/cli/main.js ...args` with stdout and stderr on pipes, started and not awaited. */
export function startBuilt(args: string[], opts: BuiltOptions): StartedBuilt {
  const child = spawn(process.execPath, [MAIN_JS, ...args], {
    cwd: opts.cwd,
    env: baseEnv(opts.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const done = new Promise<BuiltRun>((resolve, reject) => {
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => {
      stdout += String(c)
    })
    child.stderr.on('data', (c) => {
      stderr += String(c)
    })
    child.stdin.on('error', () => {}) // a command that never reads stdin may close it first
    child.stdin.end(opts.stdin ?? '')
    // A process that does not end by itself (a socket or timer left holding it) fails here.
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(
        new Error(`cms-sync ${args.join(' ')} did not end within ${opts.timeoutMs ?? 20_000} ms\n${stderr}`),
      )
    }, opts.timeoutMs ?? 20_000)
    child.once('error', reject)
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, json: parseJson(stdout) })
    })
  })
  return { child, done }
}

/** `node dist/cli/main.js ...args` with stdout and stderr on pipes. */
export function runBuilt(args: string[], opts: BuiltOptions): Promise<BuiltRun> {
  return startBuilt(args, opts).done
}

/**
 * `node dist/cli/main.js ...args | head -<lines>`: stdout's reader goes away after that many
 * lines, as `head` does, so the program's next writes meet a closed pipe (EPIPE).
 */
export function runBuiltPipedToHead(args: string[], lines: number, opts: BuiltOptions): Promise<BuiltRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN_JS, ...args], {
      cwd: opts.cwd,
      env: baseEnv(opts.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => {
      if (child.stdout.destroyed) return
      stdout += String(c)
      const kept = stdout.split('\n')
      if (kept.length > lines) {
        stdout = `${kept.slice(0, lines).join('\n')}\n`
        child.stdout.destroy()
      }
    })
    child.stderr.on('data', (c) => {
      stderr += String(c)
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`cms-sync ${args.join(' ')} did not end\n${stderr}`))
    }, opts.timeoutMs ?? 20_000)
    child.once('error', reject)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, json: undefined })
    })
  })
}

// A pseudo-terminal without native modules: python3's pty (python3 is on every new machine
// and CI runner, as node-gyp needs it). The child's stdin, stdout and stderr are the terminal;
// `input` is typed into it after `waitFor` shows in the output (or at once).
const PTY_PY = `
import json, os, pty, select, sys, time
spec = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvpe(spec["argv"][0], spec["argv"], spec["env"])
out = b""
typed = spec["input"] is None
deadline = time.time() + spec["timeout"]
while True:
    if time.time() > deadline:
        os.kill(pid, 9)
        break
    r, _, _ = select.select([fd], [], [], 0.05)
    if r:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    if not typed and spec["waitFor"].encode() in out:
        os.write(fd, spec["input"].encode())
        typed = True
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.stdout.flush()
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
`

export interface TtyRun {
  code: number | null
  /** stdout and stderr as the terminal showed them (CRLF turned into LF). */
  output: string
}

/** `node dist/cli/main.js ...args` on a pseudo-terminal of 100 columns. */
export function runBuiltInTty(
  args: string[],
  opts: BuiltOptions & { input?: string; waitFor?: string },
): Promise<TtyRun> {
  const spec = {
    argv: [process.execPath, MAIN_JS, ...args],
    env: { TERM: 'xterm-256color', COLUMNS: '100', LINES: '40', ...baseEnv(opts.env) },
    input: opts.input ?? null,
    waitFor: opts.waitFor ?? '',
    timeout: (opts.timeoutMs ?? 20_000) / 1000,
  }
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', PTY_PY, JSON.stringify(spec)], {
      cwd: opts.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    let err = ''
    child.stdout.on('data', (c) => {
      output += String(c)
    })
    child.stderr.on('data', (c) => {
      err += String(c)
    })
    child.once('error', reject)
    child.once('close', (code) => {
      if (err) reject(new Error(`the pty runner failed: ${err}`))
      else resolve({ code, output: output.replace(/\r\n/g, '\n') })
    })
  })
}
