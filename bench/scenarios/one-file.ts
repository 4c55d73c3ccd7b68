// One edited file in a large workspace: `push content/<file>` against `status content/<file>`
// on the same workspace (issue 17: a push of one file costs what one file costs, at most twice
// the status that finds it). Each round edits the file anew, times the status that reports it,
// then the push that sends it, so both see the same one change.

import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { BenchContext } from '../context.js'
import { type ChildRun, median, runChild } from '../measure.js'
import type { Row } from '../report.js'
import { childEnv, cliArgs, contentId } from '../world.js'

export async function oneFileScenario(ctx: BenchContext, workspace: string): Promise<Row[]> {
  const { world } = ctx
  const rel = `content/${contentId(0)}.json`
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
  const statusWall = median(status.map((r) => r.wallMs)) / 1000
  const pushWall = median(push.map((r) => r.wallMs)) / 1000
  return [
    {
      scenario: 'one-file push vs one-file status',
      cms: pushWall,
      baseline: statusWall,
      ratio: pushWall / statusWall,
      unit: 's',
      target: '<= 2x',
      pass: pushWall / statusWall <= 2,
      note: `push ${rel} against status ${rel}, the file edited before each pair`,
    },
  ]
}
