// schemas/<id>.json: custom schemas with the fields of docs/api-dialects.md. Schemas have no
// timestamps, so their revision is the hash of their file form.

import { type Codec, carriedFields, fileBytes, type JsonObject, pick } from './codec.js'
import { checkFile, type FieldSpec } from './file-checks.js'
import { NATIVE_SCHEMA_IDS } from './kinds.js'

const COMMON: Record<string, FieldSpec> = {
  name: { type: 'string' },
  icon: { type: 'string' },
  type: { type: 'string', required: true, oneOf: ['content', 'field'] },
  parentSchemaId: { type: 'string' },
  hiddenProperties: { type: 'string[]' },
}
const CONTENT_SCHEMA: Record<string, FieldSpec> = {
  ...COMMON,
  defaultTabId: { type: 'string' },
  tabs: { type: 'object' },
  fields: { type: 'object' },
  allowedAtRoot: { type: 'boolean' },
  allowedChildSchemas: { type: 'string[]' },
}
const FIELD_SCHEMA: Record<string, FieldSpec> = {
  ...COMMON,
  editorId: { type: 'string' },
  config: { type: 'object' },
}

function specFor(value: unknown): Record<string, FieldSpec> {
  const type = (value as JsonObject | null)?.type
  if (type === 'content') return CONTENT_SCHEMA
  if (type === 'field') return FIELD_SCHEMA
  return COMMON
}

export const schemaCodec: Codec = {
  kind: 'schema',
  toFile(remote) {
    return pick(remote, ['id', ...Object.keys(specFor(remote))])
  },
  validate(value, expectedId) {
    // Upstream would store a shadow copy that the built-in one hides forever (upstream §12).
    if (NATIVE_SCHEMA_IDS.has(expectedId)) {
      return {
        ok: false,
        problems: [`id: "${expectedId}" is a built-in schema of the server and cannot be written`],
      }
    }
    return checkFile(value, expectedId, specFor(value))
  },
  builtInIds: NATIVE_SCHEMA_IDS,
  mergesWhole(segments) {
    // A field definition (`/fields/<group>/<key>`: label, schemaId, editor config) is one leaf:
    // two edits inside one definition may not fit together (a new editor with the old editor's
    // config), so they are a conflict, while fields added or changed on different keys merge.
    return segments.length === 3 && segments[0] === 'fields'
  },
  checkReferences() {
    // A parent schema may be native or custom and the server does not enforce it on set.
    return []
  },
  toBody(file, ctx) {
    return { ...carriedFields(ctx.current), ...file }
  },
  parentOf(file) {
    return typeof file.parentSchemaId === 'string' && file.parentSchemaId !== ''
      ? file.parentSchemaId
      : undefined
  },
  fromWriteAnswer(stored) {
    return schemaCodec.toFile(stored)
  },
  revisionOf(remote) {
    return fileBytes(schemaCodec.toFile(remote)).hash
  },
  listIsIncomplete() {
    return false
  },
}
