// How deep a JSON value nests, without recursion. Everything that walks a file or a server item
// (canonical form, hashing, validation, merging) recurses: an item nesting 5,000 levels made a
// whole pull end in "internal error RangeError" (stack overflow). No content a person edits nests
// anywhere near MAX_JSON_DEPTH, so deeper items are refused alone, by name, before any walk.

export const MAX_JSON_DEPTH = 200

/** Whether `value` nests more than `max` levels of objects and arrays (walked with a stack). */
export function nestsDeeperThan(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }]
  while (stack.length > 0) {
    const { value: next, depth } = stack.pop()!
    if (next === null || typeof next !== 'object') continue
    if (depth + 1 > max) return true
    for (const child of Array.isArray(next) ? next : Object.values(next))
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1 })
  }
  return false
}

export function tooDeepMessage(max = MAX_JSON_DEPTH): string {
  return `nests deeper than ${max} levels of objects and arrays, more than cms-sync can compare safely`
}
