// Write order (upstream §11 "Order of creation"): the server checks a content's parent (and its
// schema's allowedChildSchemas) on every write, and a schema should exist before the schemas
// that extend it. So writes go parents first; deletes go children first, so a parent's delete
// never re-parents a child we are about to delete anyway.

/** Items sorted so each comes after its parent when the parent is in the same set; stable otherwise. */
export function parentsFirst<T>(
  items: readonly T[],
  idOf: (item: T) => string,
  parentOf: (item: T) => string | undefined,
): T[] {
  const byId = new Map(items.map((item) => [idOf(item), item]))
  const depth = new Map<string, number>()
  const depthOf = (item: T, seen: Set<string>): number => {
    const id = idOf(item)
    const known = depth.get(id)
    if (known !== undefined) return known
    const parentId = parentOf(item)
    const parent = parentId === undefined ? undefined : byId.get(parentId)
    // A cycle (a points at b, b at a) cannot be ordered; the server will refuse one of them.
    const value = parent === undefined || seen.has(id) ? 0 : depthOf(parent, seen.add(id)) + 1
    depth.set(id, value)
    return value
  }
  return items
    .map((item, index) => ({ item, index, depth: depthOf(item, new Set()) }))
    .sort((a, b) => a.depth - b.depth || a.index - b.index)
    .map((entry) => entry.item)
}

export function childrenFirst<T>(
  items: readonly T[],
  idOf: (item: T) => string,
  parentOf: (item: T) => string | undefined,
): T[] {
  return parentsFirst(items, idOf, parentOf).reverse()
}
