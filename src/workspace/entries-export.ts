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

function csvCell(value: unknown): string {
  const text =
    value === undefined || value === null
      ? ''
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export function entriesText(
  format: EntriesFormat,
  inputs: readonly string[],
  entries: readonly JsonObject[],
): string {
  if (format === 'json') return `${JSON.stringify(entries, null, 2)}\n`
  const columns = entryColumns(inputs, entries)
  const rows = [columns, ...entries.map((entry) => columns.map((column) => entry[column]))]
  return rows.map((row) => `${row.map(csvCell).join(',')}\r\n`).join('')
}
