// The ignore rules over many workspace paths, first sight and again, in a fresh process: the
// figure behind src/workspace/ignore-rules.ts's comment (docs/benchmarks.md).
//   npx tsx bench/ignore-rules.ts [--paths 100000] [--cmsyncignore 'drafts/']

import { parseArgs } from 'node:util'
import { ignoreRulesFrom } from '../src/workspace/ignore-rules.js'

const { values } = parseArgs({
  options: { paths: { type: 'string', default: '100000' }, cmsyncignore: { type: 'string', default: '' } },
})
const rules = ignoreRulesFrom('/ws', values.cmsyncignore.replaceAll('\\n', '\n'))
const paths = Array.from({ length: Number(values.paths) }, (_, i) => `content/item-${i}.json`)
for (const pass of ['first sight', 'again']) {
  const started = performance.now()
  let ignored = 0
  for (const p of paths) if (rules.ignores(p)) ignored++
  const ms = (performance.now() - started).toFixed(1)
  console.log(`${pass}: ${paths.length} paths in ${ms} ms (${ignored} ignored)`)
}
