// One canonical form for every JSON file cms-sync writes: keys sorted at every depth,
// 2-space indent, trailing newline. The same value always gives the same bytes, so git
// diffs show only real edits and a hash of the text is a hash of the value.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const sorted: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) sorted[key] = (value as Record<string, unknown>)[key]
  return sorted
}

export function canonicalJson(value: unknown): string {
  return `${JSON.stringify(value, sortKeys, 2)}\n`
}
