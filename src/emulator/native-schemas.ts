// The server's built-in schemas (§5.2): always listed first, locked, never stored, and
// they win over a stored schema with the same id on GET by id.

import type { Obj } from './entities.js'

const FIELD_TYPES: Array<[string, string, string]> = [
  ['array', 'Array', 'list'],
  ['boolean', 'Boolean', 'toggle-on'],
  ['contentReference', 'Content reference', 'file'],
  ['contentSchemaReference', 'Content schema reference', 'gears'],
  ['date', 'Date', 'calendar'],
  ['dropdown', 'Dropdown', 'caret-square-o-down'],
  ['language', 'Language', 'flag'],
  ['mediaReference', 'Media reference', 'file-image-o'],
  ['number', 'Number', 'hashtag'],
  ['resourceReference', 'Resource reference', 'chain'],
  ['richText', 'Rich text', 'font'],
  ['string', 'String', 'font'],
  ['struct', 'Struct', 'cubes'],
  ['tags', 'Tags', 'tags'],
  ['url', 'URL', 'link'],
]

const base = { viewedBy: '', viewedOn: null, isLocked: true, sync: {}, hiddenProperties: [] }

const editorOf = (id: string) => `${id.charAt(0).toUpperCase()}${id.slice(1)}Editor`

const NATIVE: Obj[] = [
  {
    ...base,
    id: 'contentBase',
    name: 'Content Base',
    icon: 'cogs',
    type: 'content',
    parentSchemaId: '',
    defaultTabId: 'content',
    tabs: { content: 'Content' },
    fields: { properties: { title: { label: 'Title', tabId: 'content', schemaId: 'string' } } },
    allowedAtRoot: false,
    allowedChildSchemas: [],
  },
  {
    ...base,
    id: 'page',
    name: 'Page',
    icon: 'file',
    type: 'content',
    parentSchemaId: 'contentBase',
    defaultTabId: 'content',
    tabs: {},
    fields: {
      properties: {
        description: { label: 'Description', tabId: 'content', schemaId: 'string' },
        url: { label: 'URL', tabId: 'content', schemaId: 'url' },
      },
    },
    allowedAtRoot: false,
    allowedChildSchemas: [],
  },
  {
    ...base,
    id: 'fieldBase',
    name: 'Field Base',
    icon: 'cog',
    type: 'field',
    parentSchemaId: '',
    editorId: '',
    config: {},
  },
  ...FIELD_TYPES.map(([id, name, icon]) => ({
    ...base,
    id,
    name,
    icon,
    type: 'field',
    parentSchemaId: 'fieldBase',
    editorId: editorOf(id),
    config: {},
  })),
]

const BY_ID = new Map(NATIVE.map((s) => [s.id as string, s]))

export function nativeSchemas(): Obj[] {
  return structuredClone(NATIVE)
}

export function nativeSchema(id: string): Obj | undefined {
  const schema = BY_ID.get(id)
  return schema && structuredClone(schema)
}

export function isNativeSchema(id: string): boolean {
  return BY_ID.has(id)
}
