// After an ambiguous write the client re-reads the item and must tell "our write landed" from
// "someone else's did". The server rewrites some fields on every write (§7.1) and adds defaults
// for fields we did not send, so the test is: every field we sent, minus the server-owned ones,
// came back with the same value.

/** Fields the server sets itself on a write; they never show whether our write landed. */
export const SERVER_OWNED_FIELDS: ReadonlySet<string> = new Set([
  'updateDate',
  'updatedBy',
  'createdBy',
  'createDate',
  'viewedBy',
  'viewedOn',
  'isLocked',
  'sync',
  // Form entries are people's submissions: they change on their own and never come from a file.
  'entries',
])

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Deep equality where objects in `sent` may be a subset of those in `stored` (server defaults). */
function covers(sent: unknown, stored: unknown): boolean {
  if (Array.isArray(sent)) {
    return (
      Array.isArray(stored) && sent.length === stored.length && sent.every((v, i) => covers(v, stored[i]))
    )
  }
  if (isPlainObject(sent)) {
    if (!isPlainObject(stored)) return false
    return Object.entries(sent).every(([key, value]) => value === undefined || covers(value, stored[key]))
  }
  return Object.is(sent, stored)
}

/** Whether `stored` (the item as re-read) holds what we wrote as `sent`. */
export function storedMatchesSent(sent: Record<string, unknown>, stored: Record<string, unknown>): boolean {
  for (const [key, value] of Object.entries(sent)) {
    if (SERVER_OWNED_FIELDS.has(key) || value === undefined) continue
    // A sort <= 0 asks the server to pick one (§7.1).
    if (key === 'sort' && typeof value === 'number' && value <= 0) continue
    if (!covers(value, stored[key])) return false
  }
  return true
}
