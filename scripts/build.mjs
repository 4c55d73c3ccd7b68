#!/usr/bin/env node
// `npm run build`: the CLI as a bundled, minified ESM program in dist/cli/ (main.js plus the
// chunks its lazy imports load), with source maps. One file per lazily loaded part instead of
// some 150 modules of ours and of the dependencies saves Node's module resolution and
// compilation on every start: a no-change status loads what it needs in one go.
// Type checking is `npm run typecheck` (tsc); esbuild only strips the types.

import { cp, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..')
const outdir = join(repo, 'dist', 'cli')

await rm(join(repo, 'dist'), { recursive: true, force: true })
await build({
  absWorkingDir: repo,
  entryPoints: ['src/cli/main.ts'],
  outdir,
  bundle: true,
  // Each dynamic import() stays a chunk of its own, loaded only when the code gets there.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  // Maps without the sources: stack traces name src/ files and lines (see stack-traces.ts).
  sourcemap: true,
  sourcesContent: false,
  // Some dependencies are CommonJS: they call require() and may read __filename or __dirname,
  // which an ESM chunk does not have of its own.
  banner: {
    js: [
      "import { createRequire as __cmsSyncRequire } from 'node:module';",
      'const require = __cmsSyncRequire(import.meta.url);',
      'const __filename = import.meta.filename;',
      'const __dirname = import.meta.dirname;',
    ].join(' '),
  },
  // A native addon: it finds its prebuilt binary for this platform at run time, from node_modules.
  external: ['@parcel/watcher'],
  logLevel: 'warning',
})
// The local page's files (src/page/assets/), served as they are: no front-end build (docs/page.md).
await cp(join(repo, 'src', 'page', 'assets'), join(outdir, 'page-assets'), { recursive: true })
