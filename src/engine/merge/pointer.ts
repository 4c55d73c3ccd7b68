// Leaf paths as JSON Pointers (RFC 6901): `/properties/title/de`. In an array whose items carry
// ids the segment is the item's id, not its index, so a path names the same leaf on all three
// sides whatever the order.

export function pointerOf(segments: readonly string[]): string {
  return segments.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('')
}

/** The segments of a pointer; undefined when it is not one (it must be empty or start with `/`). */
export function segmentsOf(pointer: string): string[] | undefined {
  if (pointer === '') return []
  if (!pointer.startsWith('/')) return undefined
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
}
