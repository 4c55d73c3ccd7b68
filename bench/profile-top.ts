// The functions with the most self time in a V8 .cpuprofile (node --cpu-prof), to find where
// a cms-sync run spends its CPU. `npm run bench -- --profile DIR` writes one per cms-sync run.
//   npx tsx bench/profile-top.ts DIR/CPU.*.cpuprofile [--top 25]

import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>
  samples: number[]
  timeDeltas: number[]
  startTime: number
  endTime: number
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' } },
})

function where(url: string): string {
  return url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/dist\//, 'dist/')
}

for (const file of positionals) {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]))
  const selfMs = new Map<string, number>()
  profile.samples.forEach((sample, i) => {
    const frame = frames.get(sample)!
    const key = `${frame.functionName || '(anonymous)'}  ${where(frame.url)}:${frame.lineNumber + 1}`
    selfMs.set(key, (selfMs.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000)
  })
  const totalMs = (profile.endTime - profile.startTime) / 1000
  process.stdout.write(`${file}: ${totalMs.toFixed(0)} ms\n`)
  const top = [...selfMs].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))
  for (const [key, ms] of top)
    process.stdout.write(
      `${ms.toFixed(1).padStart(9)} ms ${((ms / totalMs) * 100).toFixed(1).padStart(5)} %  ${key}\n`,
    )
}
