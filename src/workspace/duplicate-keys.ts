// JSON.parse keeps the last of two equal keys in one object, while a person reading the file (a
// reviewer of a pull request) sees the first: `{"title": "reviewed", ..., "title": "other"}`
// would push what nobody read. JSON.parse cannot tell, so the text is scanned once more. A
// scanner of our own rather than a parser library: it runs only on text JSON.parse has
// accepted, so it needs no error handling or recovery, only strings, brackets and commas
// (about 40 lines, no dependency to keep up, as fast as a library's tokenizer).

/** The first key some object of `text` (valid JSON) repeats, with the offset of its repetition. */
export function firstDuplicateKey(text: string): { key: string; offset: number } | undefined {
  // Per open container: the keys seen so far (an object), or null (an array).
  const open: (Set<string> | null)[] = []
  let expectKey = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      const start = i
      let escaped = false
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 0x5c /* \ */) {
          escaped = true
          i++
        } else if (d === 0x22) break
      }
      if (!expectKey) continue
      expectKey = false
      // `"a"` and `"\u0061"` are one key: escapes are decoded before keys are compared.
      const key = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i)
      const keys = open[open.length - 1]!
      if (keys.has(key)) return { key, offset: start }
      keys.add(key)
    } else if (c === 0x7b /* { */) {
      open.push(new Set())
      expectKey = true
    } else if (c === 0x5b /* [ */) {
      open.push(null)
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop()
    } else if (c === 0x2c /* , */) {
      expectKey = open[open.length - 1] != null
    }
  }
  return undefined
}
