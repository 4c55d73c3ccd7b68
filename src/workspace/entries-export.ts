// A form's entries as an export file: JSON (the entries as the server holds them) or CSV.
// CSV is built here rather than taken from the server, because upstream's CSV does not escape
// quotes inside values (docs/api-dialects.md); this one is RFC 4180 in both dialects.

import type { JsonObject } from './codec.js'

export type EntriesFormat = 'json' | 'csv'

/** The form's inputs in their order, then any other field an entry has, then `time`. */
export function entryColumns(inputs: readonly string[], entries: readonly JsonObject[]): string[] {
  const columns = [...inputs.filter((name) => name !== 'time')]
  for (const entry of entries) {
    for (const key of Object.keys(entry)) if (key !== 'time' && !columns.includes(key)) columns.push(key)
  }
  return [...columns, 'time']
}

/**
 * A cell a spreadsheet would read as a formula (OWASP's CSV injection list): a form is filled in
 * by strangers, and `=HYPERLINK(...)` opened in Excel or Calc runs as one. A leading ' makes it
 * text there; the JSON export, and CSV with `rawFormulas`, keep the value as sent.
 */
const FORMULA_START = /^[=+\-@\t\r]/

function csvCell(value: unknown, rawFormulas: boolean): string {
  const given =
    value === undefined || value === null
      ? ''
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value)
  const text = !rawFormulas && FORMULA_START.test(given) ? `'${given}` : given
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export function entriesText(
  format: EntriesFormat,
  inputs: readonly string[],
  entries: readonly JsonObject[],
  opts: { rawFormulas?: boolean } = {},
): string {
  if (format === 'json') return `${JSON.stringify(entries, null, 2)}\n`
  const columns = entryColumns(inputs, entries)
  const rows = [columns, ...entries.map((entry) => columns.map((column) => entry[column]))]
  const cell = (value: unknown) => csvCell(value, opts.rawFormulas === true)
  return rows.map((row) => `${row.map(cell).join(',')}\r\n`).join('')
}
