// content/<id>.json: one content node per file. The server keeps createDate from the body and
// resets it to 1970 when it is missing (upstream §5.1), and a null publishOn cancels a
// schedule (§7.1), so the body is the file plus the stored createDate, and upstream list
// answers (publishOn always null) are never trusted for the dates.

import { type Codec, type JsonObject, pick } from './codec.js'
import { checkFile, type FieldSpec } from './file-checks.js'

const CONTENT: Record<string, FieldSpec> = {
  parentId: { type: 'string|null' },
  schemaId: { type: 'string', required: true },
  sort: { type: 'number' },
  isPublished: { type: 'boolean' },
  publishOn: { type: 'date|null' },
  unpublishOn: { type: 'date|null' },
  properties: { type: 'object' },
  settings: { type: 'object' },
}

export const contentCodec: Codec = {
  kind: 'content',
  toFile(remote) {
    return pick(remote, ['id', ...Object.keys(CONTENT)])
  },
  validate(value, expectedId) {
    return checkFile(value, expectedId, CONTENT)
  },
  checkReferences(file, ctx) {
    const schemaId = file.schemaId as string
    return !ctx.schemaIds || ctx.schemaIds.has(schemaId)
      ? []
      : [`schemaId: unknown schema ${JSON.stringify(schemaId)} (neither on the server nor in schemas/)`]
  },
  toBody(file, ctx) {
    const createDate = (ctx.current?.createDate as string | null | undefined) ?? ctx.baseCreateDate ?? ctx.now
    const body: JsonObject = { publishOn: null, unpublishOn: null, ...file, createDate }
    return body
  },
  parentOf(file) {
    return typeof file.parentId === 'string' && file.parentId !== '' ? file.parentId : undefined
  },
  fromWriteAnswer(stored, sent) {
    // The server stores the dates as schedule tasks and does not change them; upstream may echo
    // them as null, which must never reach the file.
    return {
      ...contentCodec.toFile(stored),
      publishOn: sent.publishOn ?? null,
      unpublishOn: sent.unpublishOn ?? null,
    }
  },
  revisionOf(remote) {
    return typeof remote.updateDate === 'string'
      ? remote.updateDate
      : JSON.stringify(remote.updateDate ?? null)
  },
  listIsIncomplete(dialect) {
    return dialect !== 'spec'
  },
}
