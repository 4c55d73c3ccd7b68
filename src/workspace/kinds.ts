// The resource kinds a workspace mirrors, the folder each lives in, and the server fields
// that change without an edit (they stay out of files and live in the state file).

export const KINDS = ['schema', 'content', 'media', 'form', 'connection'] as const
export type Kind = (typeof KINDS)[number]

/** The `resources:` names of cms-sync.yaml, and the top-level folder of each kind. */
export const FOLDER_OF: Record<Kind, string> = {
  schema: 'schemas',
  content: 'content',
  media: 'media',
  form: 'forms',
  connection: 'connections',
}

/**
 * Whether the kind's items are bytes, not JSON (media): no codec, their own family in the
 * engine (src/engine/media/), planned against the state alone, in a tree of folders. The one
 * place that names the kind whose items are bytes.
 */
export function isBytes(kind: Kind): boolean {
  return kind === 'media'
}

/** Server-owned fields that never go into a file (design.md, "Workspace layout"). */
export const VOLATILE_FIELDS = [
  'createDate',
  'updateDate',
  'createdBy',
  'updatedBy',
  'viewedBy',
  'viewedOn',
  'isLocked',
  'sync',
] as const

/**
 * The volatile fields every write carries over from the server's current copy, because the
 * server rewrites them when a body lacks them (upstream §7.1: a missing createDate becomes
 * 1970, a missing createdBy becomes the writing user). The others it sets itself on every
 * write whatever the body says.
 */
export const CARRIED_FIELDS = ['createDate', 'createdBy', 'viewedBy', 'viewedOn'] as const

/** The server's built-in schemas (§5.2): never listed, written or deleted by cms-sync,
 * and never files in schemas/. */
export const NATIVE_SCHEMA_IDS: ReadonlySet<string> = new Set([
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
])
