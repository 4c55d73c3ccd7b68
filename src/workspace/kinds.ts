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
