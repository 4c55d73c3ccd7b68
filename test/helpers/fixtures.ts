// Shared test data: a content schema whose children may be sections, and content under it,
// in the server's full form (with the server-owned createDate).

export const SECTION_SCHEMA = {
  id: 'section',
  name: 'Section',
  icon: 'file',
  type: 'content',
  parentSchemaId: 'page',
  hiddenProperties: [],
  defaultTabId: 'content',
  tabs: { content: 'Content' },
  fields: { properties: { title: { label: 'Title', schemaId: 'string', tabId: 'content' } } },
  allowedAtRoot: true,
  allowedChildSchemas: ['section'],
}

export function contentOf(id: string, props: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    parentId: '',
    schemaId: 'section',
    sort: 1,
    isPublished: false,
    publishOn: null,
    unpublishOn: null,
    properties: { title: id },
    settings: { publishing: { connectionId: '' } },
    createDate: '2024-05-01T10:00:00.000Z',
    ...props,
  }
}

/** The file form of a content: what cms-sync writes (createDate lives in the state). */
export function contentFile(id: string, props: Record<string, unknown> = {}): Record<string, unknown> {
  const { createDate: _c, ...file } = contentOf(id, props)
  return file
}

/** A git deployment connection `site` whose deployer password is `password` (its secret leaf). */
export function gitConnection(password: string): Record<string, unknown> & { id: string } {
  return {
    id: 'site',
    title: 'Site',
    url: 'https://example.test',
    processor: { alias: 'json' },
    deployer: {
      alias: 'git',
      username: 'deploy',
      password,
      repo: 'https://git.test/r.git',
      branch: 'main',
    },
  }
}
