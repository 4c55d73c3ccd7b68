// Lazy loading is for our own modules only. A dynamic import() of a package goes through
// esbuild's CommonJS interop in the code-split bundle, where `(await import('yaml')).stringify`
// was undefined in dist/ while the in-process tests (Node's own loader) passed. A package is
// imported statically by the (lazily loaded) module of ours that needs it.

import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, test } from 'vitest'
import { sourceFiles } from '../helpers/source-files.js'

test('no source file imports a package with a dynamic import()', async () => {
  const offenders: string[] = []
  for (const file of await sourceFiles(path.resolve('src'))) {
    const lines = (await readFile(file, 'utf8')).split('\n')
    lines.forEach((line, i) => {
      if (/^\s*(\/\/|\*|\/\*)/.test(line)) return // comments may name what is not done
      // Node's built-in modules are never bundled, so they load the same either way.
      for (const m of line.matchAll(/\bimport\(\s*(['"`])([^'"`]+)\1\s*\)/g))
        if (!m[2]!.startsWith('.') && !m[2]!.startsWith('node:'))
          offenders.push(`${path.relative(process.cwd(), file)}:${i + 1}: import('${m[2]}')`)
      // A computed specifier cannot be checked, so none is allowed.
      if (/\bimport\(\s*[^'"`\s)]/.test(line) && !/import\(['"`]/.test(line))
        offenders.push(`${path.relative(process.cwd(), file)}:${i + 1}: import() of a computed name`)
    })
  }
  expect(offenders).toEqual([])
})
