// Initial pull into an empty workspace, against the naive script that fetches the same
// listings and bytes and writes the same files with no checks. Also the pull's peak memory.

import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { BenchContext } from '../context.js'
import { type ChildRun, median, runChild } from '../measure.js'
import { type Row, targetFrom } from '../report.js'
import { childEnv, cliArgs, createWorkspace } from '../world.js'

const BASELINE = path.resolve(import.meta.dirname, '..', 'baselines', 'naive-pull.mjs')
/** Generous limits: the pull measures cms-sync's own cost, not the configured throttle. */
export const FAST = { requestsPerSecond: 1000, concurrency: 8 }

/** Every kind the generated world holds: the pull and status rows cover all of it. */
export const SYNCED_RESOURCES = ['schemas', 'content', 'media']

async function countFiles(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  return entries.filter((e) => e.isFile()).length
}

/** Runs the initial pull `repeat` times each way; returns the rows and the last pulled workspace. */
export async function pullScenario(ctx: BenchContext): Promise<{ rows: Row[]; workspace: string }> {
  const { world, options } = ctx
  const resources = SYNCED_RESOURCES
  const env = childEnv(world)
  const cms: ChildRun[] = []
  const base: ChildRun[] = []
  let workspace = ''
  for (let i = 0; i < options.repeat; i++) {
    // Alternate who goes first, so neither always meets a warmer machine.
    const order = i % 2 === 0 ? ['cms', 'base'] : ['base', 'cms']
    for (const who of order) {
      if (who === 'cms') {
        if (workspace) await rm(workspace, { recursive: true, force: true })
        workspace = await createWorkspace(world, `pull-${i}`, { resources, ...FAST })
        ctx.log(`pull ${i + 1}/${options.repeat}: cms-sync`)
        cms.push(await runChild('node', cliArgs(world, '-C', workspace, 'pull'), { cwd: workspace, env }))
        const pulled = await countFiles(path.join(workspace, 'content'))
        if (pulled !== world.sizes.content)
          throw new Error(`cms-sync pulled ${pulled} content files, expected ${world.sizes.content}`)
      } else {
        const dir = path.join(world.dir, `naive-${i}`)
        ctx.log(`pull ${i + 1}/${options.repeat}: baseline`)
        base.push(
          await runChild(
            'node',
            [BASELINE, '--server', world.emulator.url, '--dir', dir, '--kinds', resources.join(',')],
            { cwd: world.dir, env },
          ),
        )
        await rm(dir, { recursive: true, force: true })
      }
    }
  }
  const what = resources.join('+')
  const wall = median(cms.map((r) => r.wallMs)) / 1000
  const baseWall = median(base.map((r) => r.wallMs)) / 1000
  const rss = Math.max(...cms.map((r) => r.peakRssMb))
  const baseRss = Math.max(...base.map((r) => r.peakRssMb))
  const rows: Row[] = [
    {
      scenario: `initial pull (${what})`,
      cms: wall,
      baseline: baseWall,
      ratio: wall / baseWall,
      unit: 's',
      ...targetFrom(world.sizes.content, 10_000, '<= 1.3x', wall / baseWall <= 1.3),
    },
    {
      // No target: shown because CPU time moves less than wall time when the machine is shared.
      scenario: 'initial pull: CPU time',
      cms: median(cms.map((r) => r.cpuSec)),
      baseline: median(base.map((r) => r.cpuSec)),
      ratio: median(cms.map((r) => r.cpuSec)) / median(base.map((r) => r.cpuSec)),
      unit: 's',
      target: '-',
    },
    {
      scenario: 'initial pull: peak RSS',
      cms: rss,
      baseline: baseRss,
      unit: 'MB',
      target: '< 300 MB',
      pass: rss < 300,
    },
  ]
  return { rows, workspace }
}

/** One untimed pull into a new workspace (the reference world's); returns the workspace. */
export async function pullOnce(ctx: BenchContext, name: string): Promise<string> {
  const { world } = ctx
  const workspace = await createWorkspace(world, name, { resources: SYNCED_RESOURCES, ...FAST })
  await runChild('node', cliArgs(world, '-C', workspace, 'pull'), { cwd: workspace, env: childEnv(world) })
  return workspace
}
