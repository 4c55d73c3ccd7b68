// The command table. Each command lives in its own module under commands/ and is imported
// only when it runs: a command line that names a command loads that module alone, so a start
// pays for no other command's code; `--help` and anything unclear load them all.

import { Command, CommanderError } from 'commander'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import { printable } from '../util/printable.js'
import { beginCommandLine, endCommandLine, refusedTokenMessage, VERSION } from './context.js'
import type { CliIo } from './io.js'

export type CommandModule = { register(program: Command, io: CliIo, setExit: (code: number) => void): void }

const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  init: () => import('./commands/init.js'),
  login: () => import('./commands/login.js'),
  logout: () => import('./commands/logout.js'),
  whoami: () => import('./commands/whoami.js'),
  emulator: () => import('./commands/emulator.js'),
  status: () => import('./commands/status.js'),
  diff: () => import('./commands/diff.js'),
  pull: () => import('./commands/pull.js'),
  push: () => import('./commands/push.js'),
  sync: () => import('./commands/sync.js'),
  resolve: () => import('./commands/resolve.js'),
  restore: () => import('./commands/restore.js'),
  entries: () => import('./commands/entries.js'),
  watch: () => import('./commands/watch.js'),
  ui: () => import('./commands/ui.js'),
  promote: () => import('./commands/promote.js'),
  doctor: () => import('./commands/doctor.js'),
  'server-config': () => import('./commands/server-config.js'),
  completion: () => import('./commands/completion.js'),
}

/** A command line or two per command, shown at the end of its --help. */
const EXAMPLES: Record<string, string[]> = {
  init: [
    'cms-sync init my-site --server https://cms.example.com --project 3f2a --environment live',
    'cms-sync init . --server http://127.0.0.1:8080 --project demo --environment live --offline',
  ],
  login: [
    'cms-sync login --username ann',
    'echo "$PASSWORD" | cms-sync login --username ci --password-stdin',
  ],
  logout: ['cms-sync logout', 'cms-sync logout --server https://cms.example.com'],
  whoami: ['cms-sync whoami', 'cms-sync --json whoami'],
  emulator: [
    'cms-sync emulator --port 8080 --seed example-workspace',
    'cms-sync emulator --port 0 --dialect upstream',
  ],
  status: ['cms-sync status', 'cms-sync status content/ --json'],
  diff: ['cms-sync diff', 'cms-sync diff content/home.json | less'],
  pull: ['cms-sync pull', 'cms-sync pull --dry-run media/'],
  push: ['cms-sync push content/home.json', 'cms-sync push --prefer local'],
  sync: ['cms-sync sync', 'cms-sync -C my-site sync --json'],
  resolve: [
    'cms-sync resolve content/home.json --keep local',
    'cms-sync resolve content --keep remote',
    "cms-sync resolve 'content/home.json#/properties/title/de' --keep remote",
  ],
  restore: ['cms-sync restore content/home.json', 'cms-sync restore --dry-run media/'],
  entries: ['cms-sync entries contact --format csv -o contact.csv', 'cms-sync entries contact --clear --yes'],
  watch: ['cms-sync watch', 'cms-sync --json watch > watch.ndjson', 'cms-sync watch --ui-port 8765'],
  ui: ['cms-sync ui', 'cms-sync ui --port 8765'],
  promote: ['cms-sync promote content/home.json --dry-run', 'cms-sync promote schemas/'],
  doctor: ['cms-sync doctor', 'cms-sync doctor --self-test'],
  'server-config': ['cms-sync server-config get mail', 'cms-sync server-config set mail mail.yaml'],
  completion: [
    'cms-sync completion bash >> ~/.bashrc',
    'cms-sync completion fish > ~/.config/fish/completions/cms-sync.fish',
  ],
}

/**
 * The command a command line names, when that can be told without commander: the first word
 * that is not an option (nor the value of -C/--dir). Undefined for anything else (no command,
 * `help`, an unknown word, `--`): then every command is registered, as help and commander's
 * suggestions need.
 */
export function commandNamed(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') return undefined
    if (arg === '--dir') i++
    else if (/^-[^-]/.test(arg) && arg.indexOf('C') === arg.length - 1)
      i++ // -C dir, -qC dir
    else if (!arg.startsWith('-')) return Object.hasOwn(COMMANDS, arg) ? arg : undefined
  }
  return undefined
}

/** The program with the command `only` (loaded alone: a run needs no other command's modules), or all of them. */
export async function buildProgram(
  io: CliIo,
  setExit: (code: number) => void,
  only?: string,
): Promise<Command> {
  const program = new Command('cms-sync')
    .description('Keep a content-management server and a folder of files in step.')
    .version(VERSION)
    // Global options: accepted before or after the command name; commands read them with
    // cmd.optsWithGlobals() (see context.ts).
    .option(
      '-C, --dir <workspace>',
      'the workspace folder (default: the nearest folder upward holding cms-sync.yaml)',
    )
    .option('--json', 'print one JSON document on stdout (logs go to stderr)')
    .option('-q, --quiet', 'print nothing but errors')
    .option(
      '-v, --verbose',
      'print debug logs on stderr: readable lines on a terminal, JSON lines (pino) in a pipe or file',
    )
    .option('--no-progress', 'never show progress bars (they only show on a terminal anyway)')
    .exitOverride()
    // Every command's --help also lists the global options (-C, --json, ...).
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
  // completion writes every command into its script, so it is given them all, as help is.
  const names = only === undefined || only === 'completion' ? Object.keys(COMMANDS) : [only]
  for (const name of names) (await COMMANDS[name]!()).register(program, io, setExit)
  for (const cmd of program.commands) {
    const examples = EXAMPLES[cmd.name()]
    if (examples) cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}\n`)
  }
  return program
}

/** Whether the command line asks for --json (before any `--`). */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--')
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json')
}

/**
 * With --json, a run that stops still prints one JSON document (design.md), so a script that
 * parses stdout always gets one: `{"error": {"message", "exitCode"}}`. The message also goes
 * to stderr, as without --json.
 */
function printError(io: CliIo, argv: readonly string[], message: string, exitCode: number): void {
  if (wantsJson(argv)) io.stdout.write(`${JSON.stringify({ error: { message, exitCode } }, null, 2)}\n`)
}

/** Runs one command line and returns its exit code; never calls process.exit. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  beginCommandLine(argv)
  let exitCode: number = ExitCode.ok
  try {
    const program = await buildProgram(
      io,
      (code) => {
        exitCode = code
      },
      commandNamed(argv),
    )
    await program.parseAsync(argv, { from: 'user' })
    await endCommandLine(exitCode)
    return exitCode
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with code 0; a bad flag with 1, which is a usage error.
      if (error.exitCode === 0) {
        await endCommandLine(ExitCode.ok)
        return ExitCode.ok
      }
      const message = error.message.replace(/^error: /, '')
      printError(io, argv, message, ExitCode.usage)
      await endCommandLine(ExitCode.usage, { error, message, exitCode: ExitCode.usage, internal: false })
      return ExitCode.usage
    }
    // A full disk anywhere (a file, the state, the lock) is the user's to fix, not our bug.
    const stop =
      error instanceof CliError ? error : (await import('../workspace/disk-full.js')).diskFull(error)
    if (stop) {
      // A refused token, here or as the cause of a stop: the message names where it came from.
      const refusedCause = stop.lead === undefined ? undefined : refusedTokenMessage(stop.cause)
      const message =
        refusedTokenMessage(stop) ?? (refusedCause !== undefined ? stop.lead + refusedCause : stop.message)
      io.stderr.write(`cms-sync: ${printable(message, { keepLines: true })}\n`)
      printError(io, argv, message, stop.exitCode)
      await endCommandLine(stop.exitCode, { error: stop, message, exitCode: stop.exitCode, internal: false })
      return stop.exitCode
    }
    await reportInternalError(io, argv, error)
    return ExitCode.failed
  }
}

/**
 * A bug of ours: an error no layer turned into a message, thrown out of a command or uncaught.
 * The stack goes to the workspace log, and the terminal names the log; where there is no log
 * (no workspace yet) the terminal shows the stack, as it is the only place left.
 */
export async function reportInternalError(io: CliIo, argv: readonly string[], error: unknown): Promise<void> {
  const message = (error as Error)?.message ?? String(error)
  const file = await endCommandLine(ExitCode.failed, {
    error,
    message,
    exitCode: ExitCode.failed,
    internal: true,
  }).catch(() => undefined)
  if (file !== undefined) {
    io.stderr.write(
      `cms-sync: internal error, please report it: ${printable(message)}\n(the stack trace is in ${printable(file)}; -v shows it here)\n`,
    )
  } else {
    const { readableStack } = await import('./stack-traces.js')
    const stack = (error as Error)?.stack
    io.stderr.write(
      `cms-sync: internal error, please report it:\n${printable(stack ? readableStack(stack) : String(error), { keepLines: true })}\n`,
    )
  }
  printError(io, argv, `internal error: ${message}`, ExitCode.failed)
}
