// `cms-sync emulator`: runs the built-in CMS server emulator until SIGINT/SIGTERM.

import { type Command, InvalidArgumentError } from 'commander'
import { CliError, ExitCode } from '../../errors/exit-codes.js'
import type { CliIo } from '../io.js'

type StartUser = { username: string; password: string; isAdmin: boolean }

function integer(name: string, min: number) {
  return (value: string) => {
    const n = Number(value)
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be a whole number >= ${min}`)
    return n
  }
}

/** NAME:PASSWORD, or NAME:PASSWORD:user for a non-admin; the first user is always an admin. */
function parseUser(value: string, previous: StartUser[] = []): StartUser[] {
  const first = value.indexOf(':')
  if (first <= 0) throw new InvalidArgumentError('expected NAME:PASSWORD or NAME:PASSWORD:user')
  let password = value.slice(first + 1)
  let isAdmin = true
  if (password.endsWith(':user')) {
    password = password.slice(0, -':user'.length)
    isAdmin = previous.length === 0
  }
  if (password === '') throw new InvalidArgumentError('the password must not be empty')
  return [...previous, { username: value.slice(0, first), password, isAdmin }]
}

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('emulator')
    .description('Run the built-in emulator of the CMS server on 127.0.0.1')
    .option('--port <n>', 'port to listen on (0 = any free port)', integer('--port', 0), 8080)
    .option('--data <dir>', 'persist to this folder (default: in memory)')
    .option('--seed <workspace>', 'load a workspace folder into the project (only into empty data)')
    .option('--user <name:password>', 'a user; repeatable; NAME:PASSWORD:user makes a non-admin', parseUser)
    .option('--project <id>', 'project to create', 'demo')
    .option('--environment <name>', 'environment to create', 'live')
    .option('--dialect <dialect>', 'spec or upstream', 'spec')
    .option('--faults <spec>', 'e.g. error=0.05,drop=0.02,drop-after=0.01,slow=0.05:1500,429=0.05')
    .option('--fault-seed <n>', 'seed for reproducible faults', integer('--fault-seed', 0), 1)
    .option('--rate-limit <n>', 'answer 429 past N requests a second', integer('--rate-limit', 1))
    .option('--max-body-mb <n>', 'largest JSON body accepted', integer('--max-body-mb', 1), 50)
    .option(
      '--deploy-root <dir>',
      'folder a filesystem connection publishes content under (default: <data>/deploy, or a temp folder)',
    )
    .action(async (opts) => {
      // Loaded here, not at the top: every cms-sync command registers this module, and only
      // this one needs the server.
      const { parseFaults, startEmulator } = await import('../../emulator/index.js')
      const { badEnvironmentName } = await import('../../emulator/projects.js')
      if (opts.dialect !== 'spec' && opts.dialect !== 'upstream') {
        throw new CliError(`--dialect must be spec or upstream, got "${opts.dialect}"`, ExitCode.usage)
      }
      const envProblem = badEnvironmentName(opts.environment)
      if (envProblem) throw new CliError(`--environment: ${envProblem}`, ExitCode.usage)
      if (opts.faults !== undefined) {
        try {
          parseFaults(opts.faults)
        } catch (error) {
          throw new CliError(`--faults: ${(error as Error).message}`, ExitCode.usage)
        }
      }
      let emulator: Awaited<ReturnType<typeof startEmulator>>
      try {
        emulator = await startEmulator({
          port: opts.port,
          dataDir: opts.data,
          seedDir: opts.seed,
          users: opts.user,
          project: opts.project,
          environment: opts.environment,
          dialect: opts.dialect,
          faults: opts.faults,
          faultSeed: opts.faultSeed,
          rateLimit: opts.rateLimit,
          maxBodyMb: opts.maxBodyMb,
          ...(opts.deployRoot ? { deployRoot: opts.deployRoot } : {}),
          logger: {
            info: (msg) => io.stderr.write(`${msg}\n`),
            warn: (msg) => io.stderr.write(`warning: ${msg}\n`),
          },
        })
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === 'EADDRINUSE') throw new CliError(`port ${opts.port} is already in use`, ExitCode.failed)
        throw new CliError((error as Error).message, ExitCode.failed)
      }
      io.stdout.write(`listening on ${emulator.url}\n`)
      await io.stopSignal
      await emulator.close()
      const counts = emulator.faults.counts
      if (opts.faults || opts.rateLimit) io.stderr.write(`faults injected: ${JSON.stringify(counts)}\n`)
      setExit(ExitCode.ok)
    })
}
