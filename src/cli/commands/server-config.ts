// `cms-sync server-config get <section> [--format yaml|json]` and `set <section> <file>`: the
// server's config sections (`/api/config/:section`, admin only). Upstream resolves "config" as
// a project name on these routes, so they never work there (§6.8); that is said plainly.

import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { type Command, Option } from 'commander'
// Static, never `await import('yaml')`: in the code-split bundle a dynamic import of this
// CommonJS package came back without its functions (test/cli/lazy-imports.test.ts). This
// module itself loads only when a server-config command runs.
import { parseDocument, stringify } from 'yaml'
import { ConfigError } from '../../config/errors.js'
import { CliError, ExitCode } from '../../errors/exit-codes.js'
import type { RemoteResponse } from '../../remote/client.js'
import { connect, globalOptions, openWorkspace, printJson, say } from '../context.js'
import type { CliIo } from '../io.js'

const SECTION = /^[A-Za-z0-9_-]+$/

function checkSection(section: string): void {
  if (!SECTION.test(section))
    throw new CliError(`"${section}" is not a config section name (letters, digits, - and _)`, ExitCode.usage)
}

function answerText(res: RemoteResponse): string {
  return typeof res.body === 'string' ? res.body.trim().slice(0, 300) : JSON.stringify(res.body ?? '')
}

/** The refusals a config route can answer, in words a user can act on. */
function refuse(res: RemoteResponse, section: string, verb: 'read' | 'write'): never {
  const text = answerText(res)
  if (/Project "config" could not be found/.test(text))
    throw new CliError(
      'the server does not support config sections (it resolves /api/config as a project; a known upstream limitation)',
    )
  if (res.status === 401) throw new CliError('not logged in: run `cms-sync login` with an admin account')
  if (res.status === 403 || /You need to be admin/.test(text))
    throw new CliError(
      `config section "${section}": this needs an admin token; the logged-in user is not an admin`,
    )
  throw new CliError(
    `could not ${verb} config section "${section}": the server answered ${res.status} ${text}`,
  )
}

/** A YAML or JSON file as a plain object; errors name the file and the line. */
export async function readSectionFile(file: string): Promise<Record<string, unknown>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new ConfigError(`${file}: cannot be read (${(error as Error).message})`)
  }
  // JSON is read by the YAML parser too, so both report errors with a line and column.
  const doc = parseDocument(text, { prettyErrors: true })
  if (doc.errors.length > 0)
    throw new ConfigError(
      doc.errors.map((e) => `${file}: ${e.message.split('\n')[0]?.replace(/:$/, '')}`).join('\n'),
    )
  const value: unknown = doc.toJS()
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(
      `${file}: (top level): expected a mapping of settings (YAML keys or a JSON object), got ${value === null ? 'nothing' : Array.isArray(value) ? 'a list' : typeof value}`,
    )
  return value as Record<string, unknown>
}

export function register(program: Command, io: CliIo, _setExit: (code: number) => void): void {
  const group = program
    .command('server-config')
    .description("Read or write one of the server's config sections (admin only)")
  group
    .command('get')
    .description('print a config section')
    .argument('<section>', 'the section name')
    .addOption(new Option('--format <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .action(async (section: string, opts: { format: 'yaml' | 'json' }, cmd: Command) => {
      checkSection(section)
      const globals = globalOptions(cmd)
      const ws = await openWorkspace(io, cmd)
      const client = await connect(io, ws)
      try {
        const res = await client.request('GET', `/api/config/${section}`)
        if (res.status !== 200) refuse(res, section, 'read')
        if (globals.json || opts.format === 'json') printJson(io, res.body)
        else io.stdout.write(stringify(res.body))
      } finally {
        await client.close()
      }
    })
  group
    .command('set')
    .description('write a config section from a YAML or JSON file')
    .argument('<section>', 'the section name')
    .argument('<file>', 'a .yaml, .yml or .json file holding the section')
    .action(async (section: string, file: string, _opts: object, cmd: Command) => {
      checkSection(section)
      const globals = globalOptions(cmd)
      // Read and check the file before anything goes to the server.
      const value = await readSectionFile(path.resolve(io.cwd, file))
      const ws = await openWorkspace(io, cmd)
      const client = await connect(io, ws)
      try {
        const res = await client.request('POST', `/api/config/${section}`, { body: value })
        if (res.status < 200 || res.status >= 300) refuse(res, section, 'write')
        if (globals.json) printJson(io, { section, written: true })
        else say(io, globals, `config section "${section}" written`)
      } finally {
        await client.close()
      }
    })
}
