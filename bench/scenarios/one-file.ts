// One edited file in a large workspace: `push content/<file>` against `status content/<file>`
// on the same workspace (issue 17: a push of one file costs what one file costs, at most twice
// the status that finds it). Each round edits the file anew, times the status that reports it,
// then the push that sends it, so both see the same one change. Issue 25 holds the push to the
// same push in a workspace of 1,000 items (the reference world of run.ts) and to its floor: a
// GET and a POST of that item by curl in one shell line (no Node start, as the status's floor),
// timed after every other scenario so its writes never meet a workspace still in use.

import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { names } from '../../src/emulator/store.js'
import type { BenchContext } from '../context.js'
import { type ChildRun, median, runChild } from '../measure.js'
import { type Row, targetFrom } from '../report.js'
import { childEnv, cliArgs, contentId, requireCurl } from '../world.js'

export const ONE_FILE_ID = contentId(0)

export interface OneFile {
  rel: string
  /** Medians, seconds. */
  statusWall: number
  pushWall: number
}

export async function measureOneFile(ctx: BenchContext, workspace: string): Promise<OneFile> {
  const { world } = ctx
  const rel = `content/${ONE_FILE_ID}.json`
  const file = path.join(workspace, rel)
  const run = async (...args: string[]): Promise<ChildRun> => {
    const result = await runChild('node', cliArgs(world, '-C', workspace, ...args), {
      cwd: workspace,
      env: childEnv(world),
    })
    // status exits 0 here (no --exit-code); anything else means the row would measure a failure.
    if (result.exitCode !== 0)
      throw new Error(`${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`)
    return result
  }
  const status: ChildRun[] = []
  const push: ChildRun[] = []
  for (let i = 0; i < ctx.options.repeat; i++) {
    ctx.log(`one-file push ${i + 1}/${ctx.options.repeat}`)
    const item = JSON.parse(await readFile(file, 'utf8'))
    item.properties.title = `One file, round ${i}`
    await writeFile(file, `${JSON.stringify(item, null, 2)}\n`)
    status.push(await run('status', rel))
    push.push(await run('push', rel))
  }
  return {
    rel,
    statusWall: median(status.map((r) => r.wallMs)) / 1000,
    pushWall: median(push.map((r) => r.wallMs)) / 1000,
  }
}

/** The GET + POST of the one-file item by curl, `repeat` times; the median, seconds. */
export async function oneItemFloor(ctx: BenchContext): Promise<number> {
  requireCurl('the one-file push floor')
  const url = `${ctx.world.emulator.url}/api/demo/live/content/${ONE_FILE_ID}`
  const auth = `-H "authorization: Bearer $CMS_SYNC_TOKEN"`
  const runs: ChildRun[] = []
  for (let i = 0; i < ctx.options.repeat; i++) {
    ctx.log(`one-file floor (GET + POST) ${i + 1}/${ctx.options.repeat}`)
    // The item read, its title changed, written back: what a push of one edited file must send.
    const line =
      `curl -sf ${auth} '${url}' | sed 's/"title":"[^"]*"/"title":"Floor ${i}"/' | ` +
      `curl -sf ${auth} -H 'content-type: application/json' --data-binary @- '${url}' -o /dev/null -w '%{http_code}'`
    const run = await runChild('sh', ['-c', line], { cwd: ctx.world.dir, env: childEnv(ctx.world) })
    if (run.stdout.trim() !== '200') throw new Error(`the floor's POST answered ${run.stdout} ${run.stderr}`)
    runs.push(run)
  }
  const title = ctx.world.emulator.store.get<{ properties: { title: string } }>(
    names.env('demo', 'live', 'content'),
    ONE_FILE_ID,
  )?.properties.title
  if (title !== `Floor ${ctx.options.repeat - 1}`) throw new Error(`the floor's POST left the title ${title}`)
  return median(runs.map((r) => r.wallMs)) / 1000
}

export function oneFileRows(
  ctx: BenchContext,
  figures: OneFile,
  floorWall: number | undefined,
  reference: { content: number; pushWall: number },
): Row[] {
  const { statusWall, pushWall, rel } = figures
  const content = ctx.world.sizes.content
  const rows: Row[] = [
    {
      scenario: `one-file push vs the same at ${reference.content / 1000}k`,
      cms: pushWall,
      baseline: reference.pushWall,
      ratio: pushWall / reference.pushWall,
      unit: 's',
      ...targetFrom(content, 100_000, '<= 2x', pushWall / reference.pushWall <= 2),
      note: `push ${rel} in a workspace of ${reference.content} content, same run`,
    },
  ]
  if (floorWall !== undefined)
    rows.push({
      scenario: 'one-file push vs GET + POST floor',
      cms: pushWall,
      baseline: floorWall,
      ratio: pushWall / floorWall,
      unit: 's',
      ...targetFrom(content, 100_000, '<= 10x', pushWall / floorWall <= 10),
      note: 'floor: curl GETs the item, curl POSTs it back changed',
    })
  rows.push({
    scenario: 'one-file push vs one-file status',
    cms: pushWall,
    baseline: statusWall,
    ratio: pushWall / statusWall,
    unit: 's',
    target: '<= 2x',
    pass: pushWall / statusWall <= 2,
    note: `push ${rel} against status ${rel}, the file edited before each pair`,
  })
  return rows
}
