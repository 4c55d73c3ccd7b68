// The server's built-in schemas (upstream §5.2). They are never listed as custom schemas nor
// written to files, yet content may use them, so a content's schemaId may name one of these.

export const NATIVE_SCHEMA_IDS: readonly string[] = [
  'contentBase',
  'page',
  'fieldBase',
  'array',
  'boolean',
  'contentReference',
  'contentSchemaReference',
  'date',
  'dropdown',
  'language',
  'mediaReference',
  'number',
  'resourceReference',
  'richText',
  'string',
  'struct',
  'tags',
  'url',
]
