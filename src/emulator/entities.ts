// Builds stored entities from request bodies the way the upstream models do (§4): every
// declared field gets the body's value or its default (a write is a full replace), unknown
// keys are dropped, and a wrong-typed value is refused (spec) or silently dropped (upstream).

import { randomBytes } from 'node:crypto'
import type { Dialect } from './dialect.js'

export type Obj = Record<string, unknown>
type FieldType = 'string' | 'number' | 'boolean' | 'date' | 'object' | 'array'
type Field = { type: FieldType; def: () => unknown }

const f = (type: FieldType, def: unknown): Field => ({ type, def: () => structuredClone(def) })

/** 8 random bytes as 16 lowercase hex chars, as EntityBase.createId does (§3). */
export function newId(): string {
  return randomBytes(8).toString('hex')
}

export function isObj(value: unknown): value is Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

const RESOURCE = { id: f('string', ''), viewedBy: f('string', ''), viewedOn: f('date', null) }
const SYNCED = { isLocked: f('boolean', false), sync: f('object', {}) }

export const SHAPES = {
  content: {
    ...RESOURCE,
    ...SYNCED,
    parentId: f('string', ''),
    schemaId: f('string', ''),
    sort: f('number', -1),
    createdBy: f('string', ''),
    updatedBy: f('string', ''),
    createDate: f('date', null),
    updateDate: f('date', null),
    publishOn: f('date', null),
    unpublishOn: f('date', null),
    isPublished: f('boolean', false),
    properties: f('object', {}),
    settings: f('object', { publishing: { connectionId: '' } }),
  },
  schemaBase: {
    ...RESOURCE,
    ...SYNCED,
    name: f('string', ''),
    icon: f('string', ''),
    type: f('string', ''),
    parentSchemaId: f('string', ''),
    hiddenProperties: f('array', []),
  },
  contentSchema: {
    defaultTabId: f('string', 'content'),
    tabs: f('object', {}),
    fields: f('object', { properties: {} }),
    allowedAtRoot: f('boolean', true),
    allowedChildSchemas: f('array', []),
  },
  fieldSchema: { editorId: f('string', ''), config: f('object', {}) },
  connection: {
    ...RESOURCE,
    ...SYNCED,
    title: f('string', ''),
    url: f('string', ''),
    processor: f('object', {}),
    deployer: f('object', {}),
  },
  form: {
    ...RESOURCE,
    ...SYNCED,
    title: f('string', ''),
    allowedOrigin: f('string', ''),
    redirect: f('string', ''),
    appendRedirect: f('boolean', false),
    inputs: f('object', {}),
    entries: f('array', []),
  },
} satisfies Record<string, Record<string, Field>>

const EXPECTED: Record<FieldType, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean',
  date: 'a date (ISO string or epoch ms)',
  object: 'an object',
  array: 'an array',
}

const NOT_VALID = Symbol('not valid')

/** The upstream assignment coercions (§4); NOT_VALID when the value cannot be the type. */
function coerce(type: FieldType, value: unknown): unknown {
  if (value === null) return null
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : NOT_VALID
    case 'number':
      if (typeof value === 'number') return Number.isFinite(value) ? value : NOT_VALID
      if (value === '' || value === false) return 0
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
        return Number(value)
      return NOT_VALID
    case 'boolean':
      if (typeof value === 'boolean') return value
      if (value === 'true' || value === 'false') return value === 'true'
      if (value === 0 || value === '') return false
      return NOT_VALID
    case 'date': {
      if (value === '' || value === 0) return null
      if (typeof value !== 'string' && typeof value !== 'number') return NOT_VALID
      const date =
        typeof value === 'string' && /^\d+$/.test(value) ? new Date(Number(value)) : new Date(value)
      return Number.isNaN(date.getTime()) ? NOT_VALID : date.toISOString()
    }
    case 'object':
      return isObj(value) ? value : NOT_VALID
    case 'array':
      return Array.isArray(value) ? value : NOT_VALID
  }
}

/** One entity from a body: every field of `shape` present, with a value of its type. */
export function build(shape: Record<string, Field>, body: Obj, dialect: Dialect, what: string): Obj {
  const out: Obj = {}
  for (const [key, field] of Object.entries(shape)) {
    if (!(key in body) || body[key] === undefined) {
      out[key] = field.def()
      continue
    }
    const value = coerce(field.type, body[key])
    if (value !== NOT_VALID) out[key] = value
    else if (dialect.body.refuseWrongTypes) {
      throw dialect.errors.bad(
        `${what} field "${key}" must be ${EXPECTED[field.type]}, got ${JSON.stringify(body[key])}`,
      )
    } else out[key] = field.def()
  }
  return out
}

/** Whether a media or id value is a plain file name (no folders, no dot-names, no controls). */
export function isPlainFileName(name: string): boolean {
  return (
    name.length > 0 && name.length <= 255 && !/[/\\\u0000-\u001f]/.test(name) && name !== '.' && name !== '..'
  )
}
