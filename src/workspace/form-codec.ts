// forms/<id>.json: the form definition (`id, title, allowedOrigin, redirect, appendRedirect,
// inputs`). Entries are people's submissions: they never enter the workspace (the client
// strips them from every answer and keeps them on every write, docs/remote-client.md) and are
// exported on request only (`cms-sync entries`). Forms have no timestamps, so their revision
// is the hash of their file form.

import { type Codec, carriedFields, fileBytes, pick } from './codec.js'
import { checkFile, type FieldSpec } from './file-checks.js'

const FORM: Record<string, FieldSpec> = {
  title: { type: 'string' },
  allowedOrigin: { type: 'string' },
  redirect: { type: 'string' },
  appendRedirect: { type: 'boolean' },
  inputs: { type: 'object' },
}

export const formCodec: Codec = {
  kind: 'form',
  toFile(remote) {
    return pick(remote, ['id', ...Object.keys(FORM)])
  },
  validate(value, expectedId) {
    if (value !== null && typeof value === 'object' && 'entries' in value) {
      return {
        ok: false,
        problems: [
          'entries: not part of a form file; entries stay on the server (export them with `cms-sync entries <formId>`)',
        ],
      }
    }
    return checkFile(value, expectedId, FORM)
  },
  holdsEntries: true,
  checkReferences() {
    return []
  },
  toBody(file, ctx) {
    return { ...carriedFields(ctx.current), ...file }
  },
  parentOf() {
    return undefined
  },
  fromWriteAnswer(stored) {
    return formCodec.toFile(stored)
  },
  revisionOf(remote) {
    return fileBytes(formCodec.toFile(remote)).hash
  },
  listIsIncomplete() {
    return false
  },
}
