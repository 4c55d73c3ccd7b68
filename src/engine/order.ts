// Write order (upstream §11 "Order of creation"): the server checks a content's parent (and its
// schema's allowedChildSchemas) on every write, and a schema should exist before the schemas
// that extend it. So writes go parents first; deletes go children first, so a parent's delete
// never re-parents a child we are about to delete anyway.

/**
 * Items grouped by depth: each level holds the items whose parent (when in the same set) is in an
 * earlier level, so the items of one level can be written at the same time. Stable within a level.
 */
export function levelsParentsFirst<T>(
  items: readonly T[],
  idOf: (item: T) => string,
  parentOf: (item: T) => string | undefined,
): T[][] {
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
  const levels: T[][] = []
  for (const item of items) {
    const level = depthOf(item, new Set())
    while (levels.length <= level) levels.push([])
    levels[level]!.push(item)
  }
  return levels.filter((level) => level.length > 0)
}

/** Items sorted so each comes after its parent when the parent is in the same set; stable otherwise. */
export function parentsFirst<T>(
  items: readonly T[],
  idOf: (item: T) => string,
  parentOf: (item: T) => string | undefined,
): T[] {
  return levelsParentsFirst(items, idOf, parentOf).flat()
}

/** Levels deepest first, each in reverse: children before their parents. */
export function levelsChildrenFirst<T>(
  items: readonly T[],
  idOf: (item: T) => string,
  parentOf: (item: T) => string | undefined,
): T[][] {
  return levelsParentsFirst(items, idOf, parentOf)
    .reverse()
    .map((level) => level.reverse())
}

export function childrenFirst<T>(
  items: readonly T[],
  idOf: (item: T) => string,
  parentOf: (item: T) => string | undefined,
): T[] {
  return levelsChildrenFirst(items, idOf, parentOf).flat()
}
