// The folders of src/ are layers: each imports only from the ones below it, so a lower layer can
// be read, tested and changed without the ones above (issue 17: errors and shared types sit at
// the bottom, no lower layer imports from src/cli/), and no folder has an import cycle (a cycle
// is two modules that can only be understood together). Type-only imports count too:
// they couple the files the same way.

import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, test } from 'vitest'
import { sourceFiles } from './helpers/source-files.js'

const SRC = path.resolve('src')

/** What each layer may import from, besides itself. `cli` is the top and may import anything. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  errors: [],
  util: ['errors'],
  log: ['errors', 'util'],
  config: ['errors', 'util', 'log'],
  workspace: ['errors', 'util', 'log', 'config'],
  state: ['errors', 'util', 'log', 'config', 'workspace'],
  remote: ['errors', 'util', 'log', 'config', 'workspace'],
  engine: ['errors', 'util', 'log', 'config', 'workspace', 'state', 'remote'],
  watch: ['errors', 'util', 'log', 'config', 'workspace', 'state', 'remote', 'engine'],
  // The local page's server: it shows the engine's and the daemon's models, below the commands.
  page: ['errors', 'util', 'log', 'config', 'workspace', 'state', 'remote', 'engine', 'watch'],
  // The emulator is a server of its own that shares the file forms, never the client.
  emulator: ['errors', 'util', 'log', 'config', 'workspace'],
}

/** Every file of src/ and the files of src/ it imports (static, dynamic and type-only). */
async function importGraph(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>()
  for (const file of await sourceFiles(SRC)) {
    const text = await readFile(file, 'utf8')
    const targets = [...text.matchAll(/(?:\bfrom|\bimport\()\s*'(\.[^']+)'/g)].map((m) =>
      path.relative(SRC, path.resolve(path.dirname(file), m[1]!.replace(/\.js$/, '.ts'))),
    )
    graph.set(path.relative(SRC, file), targets)
  }
  return graph
}

const layerOf = (rel: string) => rel.split(path.sep)[0]!

test('every import goes down the layers: no lower layer imports from a higher one', async () => {
  const graph = await importGraph()
  const upward: string[] = []
  for (const [file, targets] of graph) {
    const from = layerOf(file)
    if (from === 'cli' || !file.includes(path.sep)) continue
    expect(Object.keys(MAY_IMPORT), `src/${from}/ is not a known layer`).toContain(from)
    for (const target of targets) {
      const to = layerOf(target)
      if (to !== from && !MAY_IMPORT[from]!.includes(to)) upward.push(`src/${file} -> src/${target}`)
    }
  }
  expect(upward).toEqual([])
})

test('no folder of src/ has an import cycle', async () => {
  const graph = await importGraph()
  const cycles: string[] = []
  // Depth-first search; a file met again while still on the path closes a cycle. The whole graph
  // is searched: the layer rule above keeps every cycle inside one folder, so this covers each.
  const state = new Map<string, 'open' | 'done'>()
  const trail: string[] = []
  const visit = (file: string): void => {
    state.set(file, 'open')
    trail.push(file)
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...trail.slice(trail.indexOf(next)), next].join(' -> '))
      else if (!state.has(next)) visit(next)
    }
    trail.pop()
    state.set(file, 'done')
  }
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file)
  expect(cycles).toEqual([])
})
