// `status` with nothing changed, against the least any tool must do: `git status` on the same
// folder (committed, index warm) plus fetching the same listings with curl.

import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { BenchContext } from '../context.js'
import { type ChildRun, median, runChild } from '../measure.js'
import type { Row } from '../report.js'
import { childEnv, cliArgs } from '../world.js'

const FLOOR = path.resolve(import.meta.dirname, '..', 'baselines', 'listings-floor.mjs')

/** The listing URLs cms-sync reads for these resources (spec dialect). */
function listingUrls(ctx: BenchContext, resources: string[]): string[] {
  const api = `${ctx.world.emulator.url}/api/demo/live`
  const paths: Record<string, string> = { schemas: 'schema', content: 'content', media: 'media' }
  return resources.map((r) => `${api}/${paths[r]}`)
}

function commitAll(workspace: string): void {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: workspace, stdio: 'ignore' })
  git('init', '-q')
  git('add', '-A')
  // No automatic gc: at 12,000 loose objects the commit would start one in the background,
  // which packs the repository while both sides are being timed.
  git(
    '-c',
    'gc.auto=0',
    '-c',
    'maintenance.auto=false',
    '-c',
    'user.name=bench',
    '-c',
    'user.email=bench@cms-sync.invalid',
    'commit',
    '-q',
    '-m',
    'pulled',
  )
  git('status', '--porcelain')
}

export async function statusScenario(
  ctx: BenchContext,
  workspace: string,
  resources: string[],
): Promise<Row[]> {
  const env = childEnv(ctx.world)
  commitAll(workspace)
  const urls = listingUrls(ctx, resources)
  const curl = existsSync('/usr/bin/curl') || existsSync('/bin/curl')
  // The baseline in one shell line; without curl, node's fetch in a one-liner does the reads.
  const fetchPart = curl
    ? `curl -sf -H "authorization: Bearer $CMS_SYNC_TOKEN" ${urls.map((u) => `'${u}' -o /dev/null`).join(' ')}`
    : `node -e 'Promise.all(${JSON.stringify(urls)}.map(u=>fetch(u,{headers:{authorization:"Bearer "+process.env.CMS_SYNC_TOKEN}}).then(r=>r.arrayBuffer())))'`
  const baseline = `git status --porcelain >/dev/null && ${fetchPart}`
  const cms: ChildRun[] = []
  const base: ChildRun[] = []
  // One untimed run each: the stat cache, the git index and the page cache are warm after it.
  const runCms = () =>
    runChild('node', cliArgs(ctx.world, '-C', workspace, 'status'), {
      cwd: workspace,
      env: childEnv(ctx.world),
    })
  const runBase = () => runChild('sh', ['-c', baseline], { cwd: workspace, env })
  const runFloor = () => runChild('node', [FLOOR, ...urls], { cwd: workspace, env })
  await runCms()
  await runBase()
  const floor: ChildRun[] = []
  for (let i = 0; i < ctx.options.repeat; i++) {
    ctx.log(`status ${i + 1}/${ctx.options.repeat}`)
    cms.push(await runCms())
    base.push(await runBase())
    floor.push(await runFloor())
  }
  const wall = median(cms.map((r) => r.wallMs)) / 1000
  const baseWall = median(base.map((r) => r.wallMs)) / 1000
  const floorWall = median(floor.map((r) => r.wallMs)) / 1000
  return [
    {
      scenario: 'no-change status',
      cms: wall,
      baseline: baseWall,
      ratio: wall / baseWall,
      unit: 's',
      target: '<= 2x',
      pass: wall / baseWall <= 2,
      note: curl ? 'baseline: git status + curl' : 'baseline: git status + node fetch (no curl here)',
    },
    {
      // Not a target: what a Node program pays before comparing anything (listings-floor.mjs).
      scenario: 'status floor: Node fetch + parse',
      cms: floorWall,
      baseline: baseWall,
      ratio: floorWall / baseWall,
      unit: 's',
      target: 'context',
      note: 'node: start, fetch and JSON.parse the same listings, nothing else',
    },
  ]
}
