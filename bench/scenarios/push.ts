// Push of N edited content files at a client rate limit of R requests a second (the emulator
// itself unlimited): the rate the server saw against R (target at least 90%), and the busiest
// one-second window (never above R). Requests are counted where they land, at the emulator.

import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { BenchContext } from '../context.js'
import { runChild } from '../measure.js'
import type { Row } from '../report.js'
import { childEnv, cliArgs, contentId } from '../world.js'

/** Most requests that fall in any window of `ms` (sorted timestamps). */
export function busiestWindow(stamps: readonly number[], ms = 1000): number {
  let best = 0
  let start = 0
  for (let end = 0; end < stamps.length; end++) {
    while (stamps[end]! - stamps[start]! >= ms) start++
    best = Math.max(best, end - start + 1)
  }
  return best
}

async function setRateLimit(workspace: string, perSecond: number): Promise<void> {
  const file = path.join(workspace, 'cms-sync.yaml')
  const yaml = await readFile(file, 'utf8')
  await writeFile(
    file,
    yaml.replace(/^rateLimit:.*$/m, `rateLimit: { requestsPerSecond: ${perSecond}, concurrency: 4 }`),
  )
}

async function editContent(workspace: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const file = path.join(workspace, 'content', `${contentId(i)}.json`)
    const item = JSON.parse(await readFile(file, 'utf8'))
    item.properties.title = `Edited page ${i}`
    await writeFile(file, `${JSON.stringify(item, null, 2)}\n`)
  }
}

export async function pushScenario(ctx: BenchContext, workspace: string): Promise<Row[]> {
  const { world, options } = ctx
  const files = Math.min(options.pushFiles, world.sizes.content)
  const rate = options.rate
  await setRateLimit(workspace, rate)
  await editContent(workspace, files)
  const faults = world.emulator.faults
  const decide = faults.decide.bind(faults)
  const stamps: number[] = []
  faults.decide = () => {
    stamps.push(performance.now())
    return decide()
  }
  ctx.log(`push of ${files} files at ${rate} requests/s`)
  let run: Awaited<ReturnType<typeof runChild>>
  try {
    run = await runChild('node', cliArgs(world, '-C', workspace, 'push', '--json'), {
      cwd: workspace,
      env: childEnv(world),
    })
  } finally {
    faults.decide = decide
  }
  const applied = (JSON.parse(run.stdout) as { applied: unknown[] }).applied.length
  if (applied !== files) throw new Error(`push applied ${applied} of ${files} edited files`)
  const wallS = run.wallMs / 1000
  // The ideal: every request the push needed, sent at exactly R from the moment the process starts.
  const achieved = stamps.length / wallS
  const busiest = busiestWindow(stamps)
  const label = `push ${files} files @ ${rate}/s`
  return [
    {
      scenario: `${label}: rate used`,
      cms: achieved,
      baseline: rate,
      ratio: achieved / rate,
      unit: 'req/s',
      target: '>= 0.90x',
      pass: achieved / rate >= 0.9,
      note: `${stamps.length} requests in ${wallS.toFixed(1)} s (ideal ${(stamps.length / rate).toFixed(1)} s)`,
    },
    {
      // The other reading, wall time against files/R: cms-sync reads each item just before
      // writing it (a remote edit since the listing becomes a conflict, not an overwrite; the
      // server has no conditional write), so two requests per file bound this at 0.5x.
      scenario: `${label}: wall vs ${files}/R`,
      cms: wallS,
      baseline: files / rate,
      ratio: files / rate / wallS,
      unit: 's',
      target: '(2 requests/file)',
      note: 'read-before-write per file halves it by design',
    },
    {
      scenario: `${label}: busiest 1 s`,
      cms: busiest,
      baseline: rate,
      ratio: busiest / rate,
      unit: 'req',
      target: `<= ${rate}`,
      pass: busiest <= rate,
    },
  ]
}
