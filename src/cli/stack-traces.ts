// The built CLI is one minified bundle (scripts/build.mjs): its stack traces point at columns
// of long generated lines. Node's --enable-source-maps would fix that on every start, at the
// cost of reading every map as each chunk loads; here the maps beside the chunks are read only
// when a stack is actually shown, so `internal error` reports still name src/ files and lines.

import { readFileSync } from 'node:fs'
import { SourceMap, type SourceMapPayload } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

// "at name (file:///x/chunk.js:1:234)", "at async file:///x/chunk.js:1:234", ...
const FRAME = /^(\s*at (?:async )?)(?:(.*?) \()?((?:file:\/\/)?\/[^():]+\.js):(\d+):(\d+)\)?$/

function mapFor(file: string, cache: Map<string, SourceMap | null>): SourceMap | null {
  let map = cache.get(file)
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as SourceMapPayload)
    } catch {
      map = null // no map beside it (the sources run through tsx, or node_modules)
    }
    cache.set(file, map)
  }
  return map
}

/** The stack with every frame of a file that has a source map rewritten to the original position. */
export function readableStack(stack: string): string {
  const cache = new Map<string, SourceMap | null>()
  return stack
    .split('\n')
    .map((line) => {
      const frame = FRAME.exec(line)
      if (!frame) return line
      const [, at, name, location, row, column] = frame
      const file = location!.startsWith('file:') ? fileURLToPath(location!) : location!
      const map = mapFor(file, cache)
      const entry = map?.findEntry(Number(row) - 1, Number(column) - 1) as
        | { originalSource?: string; originalLine?: number; originalColumn?: number }
        | undefined
      if (!entry?.originalSource || entry.originalLine === undefined) return line
      const source = path.resolve(path.dirname(file), entry.originalSource)
      const where = `${source}:${entry.originalLine + 1}:${(entry.originalColumn ?? 0) + 1}`
      // The function name stays the generated one, as with --enable-source-maps.
      return name ? `${at}${name} (${where})` : `${at}${where}`
    })
    .join('\n')
}
