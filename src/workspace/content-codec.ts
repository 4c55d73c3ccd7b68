// content/<id>.json: one content node per file. The server keeps createDate from the body and
// resets it to 1970 when it is missing (upstream §5.1), and a null publishOn cancels a
// schedule (§7.1), so the body is the file plus the stored createDate, and upstream list
// answers (publishOn always null) are never trusted for the dates.
//
// The revision is updateDate plus the hash of what a listing shows of the item: the server
// changes some items without touching updateDate (deleting a parent sets its children's
// parentId to null, upstream §11), and such a change must be seen too.

import { canonicalJson } from './canonical-json.js'
import { type Codec, carriedFields, hashText, type JsonObject, pick } from './codec.js'
import { checkFile, type FieldSpec } from './file-checks.js'

/** In the order the server's Content entity gives its fields (upstream §5.1). */
const CONTENT: Record<string, FieldSpec> = {
  parentId: { type: 'string|null' },
  schemaId: { type: 'string', required: true },
  sort: { type: 'number' },
  publishOn: { type: 'date|null' },
  unpublishOn: { type: 'date|null' },
  isPublished: { type: 'boolean' },
  properties: { type: 'object' },
  settings: { type: 'object' },
}

/** Fields a listing may show differently from a read by id (upstream lists give them null). */
const UNLISTED = new Set(['publishOn', 'unpublishOn'])

function updateDateOf(remote: JsonObject): string {
  return typeof remote.updateDate === 'string' ? remote.updateDate : JSON.stringify(remote.updateDate ?? null)
}

/** The hash of the file form without the fields lists get wrong: equal for a listed and a read copy. */
function listedHash(remote: JsonObject): string {
  const file = contentCodec.toFile(remote)
  for (const key of UNLISTED) delete file[key]
  return hashText(canonicalJson(file))
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
    const known = ctx.ids?.schema
    return !known || known.has(schemaId)
      ? []
      : [`schemaId: unknown schema ${JSON.stringify(schemaId)} (neither on the server nor in schemas/)`]
  },
  toBody(file, ctx) {
    const createDate = (ctx.current?.createDate as string | null | undefined) ?? ctx.baseCreateDate ?? ctx.now
    return { ...carriedFields(ctx.current), publishOn: null, unpublishOn: null, ...file, createDate }
  },
  parentField: 'parentId',
  uses: { kind: 'schema', idOf: (file) => (typeof file.schemaId === 'string' ? file.schemaId : undefined) },
  publishes: true,
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
    return `${updateDateOf(remote)}#${listedHash(remote)}`
  },
  listIsIncomplete(listing) {
    return !listing.scheduleDates
  },
  schedules(item) {
    return [item.publishOn, item.unpublishOn].some((date) => typeof date === 'string' && date !== '')
  },
}
