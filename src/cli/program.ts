// The command table. Each command lives in its own module under commands/ and is imported
// only when it runs, so `--help` and `--version` stay near Node's own start-up time.

import { Command, CommanderError } from 'commander'
import { CliError, ExitCode } from './exit-codes.js'
import type { CliIo } from './io.js'

export type CommandModule = { register(program: Command, io: CliIo, setExit: (code: number) => void): void }

const COMMANDS: Array<() => Promise<CommandModule>> = [
  () => import('./commands/init.js'),
  () => import('./commands/login.js'),
  () => import('./commands/emulator.js'),
  () => import('./commands/status.js'),
  () => import('./commands/diff.js'),
  () => import('./commands/pull.js'),
  () => import('./commands/push.js'),
  () => import('./commands/sync.js'),
  () => import('./commands/resolve.js'),
  () => import('./commands/entries.js'),
  () => import('./commands/watch.js'),
  () => import('./commands/promote.js'),
  () => import('./commands/doctor.js'),
  () => import('./commands/server-config.js'),
]

export async function buildProgram(io: CliIo, setExit: (code: number) => void): Promise<Command> {
  const program = new Command('cms-sync')
    .description('Keep a content-management server and a folder of files in step.')
    .version('0.1.0')
    // Global options: accepted before or after the command name; commands read them with
    // cmd.optsWithGlobals() (see context.ts).
    .option(
      '-C, --dir <workspace>',
      'the workspace folder (default: the nearest folder upward holding cms-sync.yaml)',
    )
    .option('--json', 'print one JSON document on stdout (logs go to stderr)')
    .option('-q, --quiet', 'print nothing but errors')
    .option('-v, --verbose', 'print debug logs on stderr')
    .option('--no-progress', 'never show progress bars (they only show on a terminal anyway)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
  for (const load of COMMANDS) (await load()).register(program, io, setExit)
  return program
}

/** Runs one command line and returns its exit code; never calls process.exit. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  let exitCode: number = ExitCode.ok
  const program = await buildProgram(io, (code) => {
    exitCode = code
  })
  try {
    await program.parseAsync(argv, { from: 'user' })
    return exitCode
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with code 0; a bad flag with 1, which is a usage error.
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage
    }
    if (error instanceof CliError) {
      io.stderr.write(`cms-sync: ${error.message}\n`)
      return error.exitCode
    }
    const { readableStack } = await import('./stack-traces.js')
    const stack = (error as Error).stack
    io.stderr.write(
      `cms-sync: internal error, please report it:\n${stack ? readableStack(stack) : String(error)}\n`,
    )
    return ExitCode.failed
  }
}
