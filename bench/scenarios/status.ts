// `status` with nothing changed, against the least any tool must do: `git status` on the same
// folder (committed, index warm) plus the same listings asked conditionally with curl (each a
// 304: the ETags are taken with HEAD beforehand, untimed). Also the status's peak memory.

import { execFileSync } from 'node:child_process'
import type { BenchContext } from '../context.js'
import { type ChildRun, median, runChild } from '../measure.js'
import { type Row, targetFrom } from '../report.js'
import { childEnv, cliArgs, listingUrls, requireCurl } from '../world.js'

/** Each listing's current ETag, read with HEAD (no body sent). */
async function etagsOf(ctx: BenchContext, urls: string[]): Promise<string[]> {
  const headers = { authorization: `Bearer ${ctx.world.token}` }
  return Promise.all(
    urls.map(async (url) => {
      const response = await fetch(url, { method: 'HEAD', headers })
      const etag = response.headers.get('etag')
      if (response.status !== 200 || !etag) throw new Error(`HEAD ${url}: ${response.status}, ETag ${etag}`)
      return etag
    }),
  )
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

export async function statusScenario(ctx: BenchContext, workspace: string): Promise<Row[]> {
  requireCurl('the no-change status baseline')
  const env = childEnv(ctx.world)
  commitAll(workspace)
  const urls = listingUrls(ctx.world)
  const etags = await etagsOf(ctx, urls)
  // One shell line, one curl: each listing asked with its ETag; curl prints each answer's status.
  const asks = urls.map(
    (url, i) =>
      `-H "authorization: Bearer $CMS_SYNC_TOKEN" -H 'if-none-match: ${etags[i]}' '${url}' -o /dev/null -w '%{http_code} '`,
  )
  const baseline = `git status --porcelain >/dev/null && curl -s ${asks.join(' --next -s ')}`
  const cms: ChildRun[] = []
  const base: ChildRun[] = []
  const runCms = () =>
    runChild('node', cliArgs(ctx.world, '-C', workspace, 'status'), { cwd: workspace, env })
  const runBase = async () => {
    const run = await runChild('sh', ['-c', baseline], { cwd: workspace, env })
    if (run.stdout.trim() !== urls.map(() => '304').join(' '))
      throw new Error(`the baseline's conditional listings answered ${run.stdout}, expected 304 each`)
    return run
  }
  // One untimed run each: the stat cache, the git index and the page cache are warm after it.
  await runCms()
  await runBase()
  for (let i = 0; i < ctx.options.repeat; i++) {
    ctx.log(`status ${i + 1}/${ctx.options.repeat}`)
    // Alternate who goes first, so neither always meets a warmer machine.
    if (i % 2 === 0) {
      cms.push(await runCms())
      base.push(await runBase())
    } else {
      base.push(await runBase())
      cms.push(await runCms())
    }
  }
  const wall = median(cms.map((r) => r.wallMs)) / 1000
  const baseWall = median(base.map((r) => r.wallMs)) / 1000
  const rss = Math.max(...cms.map((r) => r.peakRssMb))
  const content = ctx.world.sizes.content
  return [
    {
      scenario: 'no-change status vs git status + conditional listings',
      cms: wall,
      baseline: baseWall,
      ratio: wall / baseWall,
      unit: 's',
      ...targetFrom(content, 10_000, '<= 1.5x', wall / baseWall <= 1.5),
      note: `baseline: git status + curl of ${urls.length} listings with If-None-Match, each a 304`,
    },
    {
      scenario: 'no-change status: peak RSS',
      cms: rss,
      unit: 'MB',
      ...targetFrom(content, 100_000, '< 300 MB', rss < 300),
    },
  ]
}
