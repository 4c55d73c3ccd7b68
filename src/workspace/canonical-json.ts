// One canonical form for every JSON file cms-sync writes: the keys in the order the value holds
// them (the order the server gives: schema fields, tabs and form inputs are shown to editors
// in that order, so a reorder is a change), 2-space indent, trailing newline. The same value
// always gives the same bytes, so git diffs show only real edits and a hash of the text is a
// hash of the value, its order included.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

export function canonicalJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const sorted: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) sorted[key] = (value as Record<string, unknown>)[key]
  return sorted
}

/**
 * The form files had before state version 2: keys sorted at every depth. Only to compare an
 * item whose base a version-1 state recorded (its hashes are of this form) until its next
 * write; never written.
 */
export function sortedJson(value: unknown): string {
  return `${JSON.stringify(value, sortKeys, 2)}\n`
}
