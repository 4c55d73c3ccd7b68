// `cms-sync entries <formId> [--format json|csv] [--output FILE] [--clear --yes]`: exports a
// form's entries (people's submissions, never part of the workspace) and, on request, clears
// them. A clear always exports first and deletes only the entries it exported, so an entry is
// never lost unseen, not even one submitted between the export and the clear.

import path from 'node:path'
import type { Command } from 'commander'
import { CliError, ExitCode } from '../../errors/exit-codes.js'
import { writeFileAtomically } from '../../util/atomic-write.js'
import type { JsonObject } from '../../workspace/codec.js'
import { type EntriesFormat, entriesText } from '../../workspace/entries-export.js'
import { connect, openWorkspace } from '../context.js'
import type { CliIo } from '../io.js'

interface EntriesOptions {
  format?: string
  output?: string
  clear?: boolean
  yes?: boolean
  rawFormulas?: boolean
}

function formatOf(opts: EntriesOptions): EntriesFormat {
  const format = opts.format ?? 'json'
  if (format !== 'json' && format !== 'csv')
    throw new CliError(`--format: expected json or csv, got ${JSON.stringify(format)}`, ExitCode.usage)
  return format
}

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('entries')
    .description("Export a form's entries as JSON or CSV (and with --clear --yes, delete them)")
    .argument('<formId>', 'the form id')
    .option('--format <format>', 'json or csv', 'json')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .option('--clear', 'delete the entries on the server after exporting them (needs --yes)')
    .option('--yes', 'confirm --clear')
    .option(
      '--raw-formulas',
      "CSV: keep cells that start with = + - @ as sent (by default they get a leading ' so a spreadsheet shows them as text)",
    )
    .action(async (formId: string, opts: EntriesOptions, cmd: Command) => {
      const ws = await openWorkspace(io, cmd)
      const format = formatOf(opts)
      if (opts.clear && !opts.yes) {
        throw new CliError(
          `--clear deletes every entry of form "${formId}" on the server; add --yes to confirm (nothing was cleared)`,
          ExitCode.usage,
        )
      }
      const client = await connect(io, ws)
      try {
        const form = await client.get('form', formId)
        const entries = form ? await client.formEntries(formId) : undefined
        if (!form || !entries) throw new CliError(`the server has no form "${formId}"`)
        const inputs = Object.keys((form.inputs as JsonObject | undefined) ?? {})
        const text = entriesText(format, inputs, entries, { rawFormulas: opts.rawFormulas === true })
        if (opts.output) await writeFileAtomically(path.resolve(io.cwd, opts.output), text)
        else io.stdout.write(text)
        if (opts.clear) {
          // Only what was exported is cleared: an entry submitted meanwhile stays on the server.
          const { cleared, kept } = await client.clearExportedFormEntries(formId, entries)
          ws.logger.info({ formId, entries: cleared, kept }, 'form entries cleared')
          if (!ws.globals.quiet) {
            const late = kept > 0 ? `; kept ${kept} that arrived after the export` : ''
            io.stderr.write(
              `cleared ${cleared} entr${cleared === 1 ? 'y' : 'ies'} of form "${formId}" (exported ${opts.output ? `to ${opts.output}` : 'above'})${late}\n`,
            )
          }
        }
        setExit(ExitCode.ok)
      } finally {
        await client.close()
      }
    })
}
