// Field checks shared by the codecs. Each problem names the field, what was expected and
// what was found, so a person can fix the file without reading our code.

import type { JsonObject } from './codec.js'

export type FieldType = 'string' | 'string|null' | 'boolean' | 'number' | 'object' | 'string[]' | 'date|null'

export interface FieldSpec {
  type: FieldType
  required?: boolean
  oneOf?: readonly string[]
}

/** Words the server routes before `/:id` (upstream §1.1): a POST to them never reaches the item. */
export const ROUTE_WORDS: ReadonlySet<string> = new Set([
  'new',
  'insert',
  'import',
  'example',
  'publish',
  'unpublish',
  'heartbeat',
  'pull',
  'push',
  'tree',
  'deployers',
  'processors',
])

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string')
    return `${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)} (string)`
  if (typeof value === 'object') return 'an object'
  return `${String(value)} (${typeof value})`
}

function matches(type: FieldType, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'string|null':
      return value === null || typeof value === 'string'
    case 'boolean':
      return typeof value === 'boolean'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value)
    case 'string[]':
      return Array.isArray(value) && value.every((v) => typeof v === 'string')
    case 'date|null':
      return value === null || (typeof value === 'string' && !Number.isNaN(Date.parse(value)))
  }
}

const EXPECTED: Record<FieldType, string> = {
  string: 'a string',
  'string|null': 'a string or null',
  boolean: 'true or false',
  number: 'a number',
  object: 'an object',
  'string[]': 'an array of strings',
  'date|null': 'an ISO date string or null',
}

/**
 * Checks a parsed file against its field table. A file without `id` takes the id its file
 * name stands for; an id that differs from the file name is refused, because the file name
 * is how the item is found again. The file object comes back with its top-level keys in the
 * table's order (`id` first): the server stores its own fixed order there whatever a write
 * sends, so moving a top-level key is not an edit; below the top level the file's order is
 * kept, since that order (fields, tabs, inputs) is what the server stores and shows.
 */
export function checkFile(
  value: unknown,
  expectedId: string,
  spec: Record<string, FieldSpec>,
): { ok: true; file: JsonObject } | { ok: false; problems: string[] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, problems: [`expected a JSON object, got ${describe(value)}`] }
  }
  const file: JsonObject = { ...(value as JsonObject) }
  const problems: string[] = []
  if (file.id === undefined) file.id = expectedId
  if (typeof file.id !== 'string') problems.push(`id: expected a string, got ${describe(file.id)}`)
  else if (file.id !== expectedId) {
    problems.push(
      `id: ${JSON.stringify(file.id)} does not match the file name, which stands for ${JSON.stringify(expectedId)}`,
    )
  } else if (ROUTE_WORDS.has(file.id)) {
    problems.push(
      `id: ${JSON.stringify(file.id)} is a word the server reserves for its own routes; rename the file`,
    )
  }
  for (const [key, field] of Object.entries(spec)) {
    const present = key in file
    if (!present) {
      if (field.required) problems.push(`${key}: required, expected ${EXPECTED[field.type]}`)
      continue
    }
    if (!matches(field.type, file[key])) {
      problems.push(`${key}: expected ${EXPECTED[field.type]}, got ${describe(file[key])}`)
    } else if (field.oneOf && !field.oneOf.includes(file[key] as string)) {
      problems.push(`${key}: expected one of ${field.oneOf.join(', ')}, got ${describe(file[key])}`)
    }
  }
  for (const key of Object.keys(file)) {
    if (key !== 'id' && !(key in spec)) {
      problems.push(`${key}: not a field of this kind's file format (the server would drop it)`)
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, file: inTableOrder(file, spec) }
}

function inTableOrder(file: JsonObject, spec: Record<string, FieldSpec>): JsonObject {
  const ordered: JsonObject = { id: file.id }
  for (const key of Object.keys(spec)) if (key in file) ordered[key] = file[key]
  return ordered
}
