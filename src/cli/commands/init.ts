// `cms-sync init [dir]`: writes cms-sync.yaml and the .gitignore line for .cms-sync/. Unless
// --offline, it first asks the server whether the project and environment exist (the Server
// group), so a typo is caught now, with the names that do exist, rather than at the first sync.

import { mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { type Command, Option } from 'commander'
import type { Config } from '../../config/config.js'
import { ConfigError } from '../../config/errors.js'
import { CONFIG_FILE, findWorkspaceRoot } from '../../config/find-root.js'
import { CliError, ExitCode } from '../../errors/exit-codes.js'
import { writeFileAtomically } from '../../util/atomic-write.js'
import { linkOnPath, refuseOwnLinks, SymbolicLinkError } from '../../workspace/no-follow.js'
import { commandLogger, globalOptions, printJson, say } from '../context.js'
import type { CliIo } from '../io.js'

interface InitOptions {
  server: string
  project: string
  environment: string
  dialect: Config['dialect']
  force?: boolean
  offline?: boolean
  insecure?: boolean
}

const IGNORE_LINE = '.cms-sync/'

/** A .gitignore that is a link is never written through (it may point anywhere): no-follow.ts. */
function refuseLinkedGitignore(root: string): void {
  const link = linkOnPath(root, '.gitignore')
  if (link !== undefined)
    throw new ConfigError(
      `${new SymbolicLinkError(link, undefined).message}: replace it with the file itself (nothing was written)`,
    )
}

/** Adds `.cms-sync/` to .gitignore unless some line already ignores it. */
export async function ensureGitignored(root: string): Promise<boolean> {
  refuseLinkedGitignore(root)
  const file = path.join(root, '.gitignore')
  let text = ''
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const lines = text.split(/\r?\n/).map((l) => l.trim())
  if (lines.some((l) => ['.cms-sync', '.cms-sync/', '/.cms-sync', '/.cms-sync/'].includes(l))) return false
  const separator = text === '' || text.endsWith('\n') ? '' : '\n'
  // The user's own lines are rewritten with ours: whole or not at all.
  await writeFileAtomically(file, `${text}${separator}${IGNORE_LINE}\n`)
  return true
}

/** Asks the server whether the target exists. Returns the detected dialect and a note for the user. */
async function checkTarget(
  io: CliIo,
  opts: InitOptions,
  verbose: boolean,
): Promise<{ dialect: string; note?: string }> {
  const { createRemoteClient } = await import('../../remote/index.js')
  const { resolveToken } = await import('../../config/credentials.js')
  const client = await createRemoteClient({
    server: opts.server,
    project: opts.project,
    environment: opts.environment,
    token: await resolveToken(io.env, opts.server),
    dialect: opts.dialect,
    rateLimit: { requestsPerSecond: 5, concurrency: 1 },
    timeoutMs: 10_000,
    maxRetries: 1,
    tlsInsecure: opts.insecure === true,
    logger: await commandLogger(io, { progress: true, verbose }),
  }).catch((error: unknown) => {
    throw new CliError(
      `could not check the server: ${(error as Error).message}\n(use --offline to write cms-sync.yaml without checking)`,
      ExitCode.failed,
    )
  })
  try {
    // The Server group: does the project exist, and has it this environment? (lists the choices)
    const { checkTarget, describeChoices } = await import('../../remote/server-group.js')
    const check = await checkTarget(client)
    if (check.ok === false) throw new ConfigError(`${opts.server}: ${describeChoices(check)}`)
    if (check.ok === 'unknown') {
      const loggedOut = check.status === 401
      return {
        dialect: client.dialect,
        note: loggedOut
          ? 'not logged in yet: run `cms-sync login` next'
          : `could not confirm the target: ${check.message}`,
      }
    }
    return { dialect: client.dialect }
  } finally {
    await client.close()
  }
}

export function register(program: Command, io: CliIo, _setExit: (code: number) => void): void {
  program
    .command('init')
    .description('create cms-sync.yaml for a server, project and environment')
    .argument('[dir]', 'the workspace folder (default: -C, else the current folder)')
    .requiredOption('--server <url>', 'the server URL, e.g. http://127.0.0.1:8080')
    .requiredOption('--project <id>', 'the project id')
    .requiredOption('--environment <name>', 'the environment name, e.g. live')
    .addOption(
      new Option('--dialect <dialect>', 'the API dialect')
        .choices(['auto', 'spec', 'upstream'])
        .default('auto'),
    )
    .option('--force', 'overwrite an existing cms-sync.yaml (its comments are kept)')
    .option('--offline', 'do not ask the server whether the project and environment exist')
    .option('--insecure', 'do not verify the server TLS certificate (writes tls.insecure: true)')
    .action(async (dir: string | undefined, opts: InitOptions, cmd: Command) => {
      const globals = globalOptions(cmd)
      const root = path.resolve(io.cwd, dir ?? globals.dir ?? '.')
      const existing = await readFile(path.join(root, CONFIG_FILE)).then(
        () => true,
        () => false,
      )
      if (existing && !opts.force)
        throw new CliError(
          `${path.join(root, CONFIG_FILE)} already exists; use --force to rewrite it`,
          ExitCode.usage,
        )
      // A workspace inside another: the outer one would sync the inner's files (its
      // cms-sync.yaml under media/ would be uploaded as a media file) and both would fight.
      const outer = await findWorkspaceRoot(path.dirname(root))
      if (outer !== undefined)
        throw new CliError(
          `${root} is inside the workspace ${outer}; a workspace cannot hold another (the outer one would sync its files); choose a folder outside it`,
          ExitCode.usage,
        )
      const values = {
        server: opts.server,
        project: opts.project,
        environment: opts.environment,
        dialect: opts.dialect,
        ...(opts.insecure ? { tls: { insecure: true } } : {}),
      }
      const { checkServerUrl, parseConfig, writeNewConfig } = await import('../../config/config.js')
      checkServerUrl(opts.server, '--server')
      // Validate before any network or disk work: a bad URL is a usage error, not a network one.
      parseConfig(JSON.stringify(values))
      // Neither file is written through a link, and neither is written when one of them is a link.
      refuseOwnLinks(root)
      refuseLinkedGitignore(root)
      const check = opts.offline ? undefined : await checkTarget(io, opts, globals.verbose === true)
      await mkdir(root, { recursive: true })
      await writeNewConfig(root, values)
      const ignored = await ensureGitignored(root)
      if (globals.json) {
        printJson(io, {
          root,
          server: opts.server,
          project: opts.project,
          environment: opts.environment,
          dialect: opts.dialect,
          detectedDialect: check?.dialect ?? null,
          checked: check !== undefined,
        })
        return
      }
      say(
        io,
        globals,
        `wrote ${path.join(root, CONFIG_FILE)} for ${opts.server} project ${opts.project} environment ${opts.environment}`,
      )
      if (ignored) say(io, globals, `added ${IGNORE_LINE} to ${path.join(root, '.gitignore')}`)
      if (check) say(io, globals, `the server speaks the ${check.dialect} dialect`)
      if (check?.note) say(io, globals, check.note)
    })
}
