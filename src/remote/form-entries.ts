// A form's entries (the submissions people made): read, cleared, or cleared of exactly the
// entries an export took, so that an entry submitted after the export is never lost.

import { type ClientContext, ITEM_MAX_BYTES, itemPath, refuseId } from './client-context.js'
import type { RemoteObject } from './client-types.js'
import { remoteError } from './errors.js'
import { fetchItem } from './items.js'

export async function formEntries(ctx: ClientContext, formId: string): Promise<RemoteObject[] | undefined> {
  const form = await fetchItem(ctx, 'form', formId)
  if (!form) return undefined
  return Array.isArray(form.entries) ? (form.entries as RemoteObject[]) : []
}

export async function clearFormEntries(ctx: ClientContext, formId: string): Promise<void> {
  refuseId(ctx, 'form', formId, 'POST')
  const answer = await ctx.transport.send({
    method: 'POST',
    path: `${ctx.P}/forms/clear/${encodeURIComponent(formId)}`,
    itemId: formId,
    // Clearing twice is clearing once: safe to retry after an ambiguous failure.
    idempotent: true,
  })
  if (answer.kind !== 'ok') throw answer.fail(`could not clear the entries of form "${formId}"`)
}

/** `entries` without one of each entry of `exported` (equal JSON), as many times as exported. */
function withoutExported(
  entries: readonly RemoteObject[],
  exported: readonly RemoteObject[],
): RemoteObject[] {
  const unexported = new Map<string, number>()
  for (const entry of exported) {
    const key = JSON.stringify(entry)
    unexported.set(key, (unexported.get(key) ?? 0) + 1)
  }
  return entries.filter((entry) => {
    const key = JSON.stringify(entry)
    const left = unexported.get(key) ?? 0
    if (left === 0) return true
    unexported.set(key, left - 1)
    return false
  })
}

export async function clearExportedFormEntries(
  ctx: ClientContext,
  formId: string,
  exported: readonly RemoteObject[],
): Promise<{ cleared: number; kept: number }> {
  refuseId(ctx, 'form', formId, 'POST')
  // Read again right before clearing: the server's clear takes every entry, so an entry
  // submitted after the export must be written back instead of cleared. The gap left is this
  // one round trip (the API has no conditional clear).
  const current = await fetchItem(ctx, 'form', formId)
  if (!current)
    throw remoteError('rejected', `the server has no form "${formId}"`, {
      method: 'GET',
      route: itemPath(ctx, 'form', formId),
      itemId: formId,
    })
  const entries = Array.isArray(current.entries) ? (current.entries as RemoteObject[]) : []
  const remaining = withoutExported(entries, exported)
  if (remaining.length === 0) {
    await clearFormEntries(ctx, formId)
    return { cleared: entries.length, kept: 0 }
  }
  // The form as it was just read, with only the entries nobody has exported: both dialects
  // replace the stored entries with a body's. Never repeated blindly: a retry could drop an
  // entry submitted meanwhile.
  const answer = await ctx.transport.send({
    method: 'POST',
    path: itemPath(ctx, 'form', formId),
    itemId: formId,
    idempotent: false,
    maxBytes: ITEM_MAX_BYTES,
    body: { ...current, id: formId, entries: remaining },
  })
  if (answer.kind !== 'ok') throw answer.fail(`could not clear the exported entries of form "${formId}"`)
  return { cleared: entries.length - remaining.length, kept: remaining.length }
}
