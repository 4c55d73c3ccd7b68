// Two built CLIs and the baseline pulling into empty folders in turn, against one bench world:
// a comparison of two builds that a shared machine's drift from run to run does not decide.
// The order rotates each round, so no side always meets a warmer (or busier) machine.
//   npx tsx bench/pull-ab.ts --a OTHER/dist/cli/main.js [--b dist/cli/main.js] \
//     [--content 10000] [--media 1000] [--rounds 6]
// OTHER is a checkout of the other commit, built there (`npm run build`).

import { rm } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { type ChildRun, median, runChild } from './measure.js'
import { FAST, SYNCED_RESOURCES } from './scenarios/pull.js'
import { childEnv, createWorkspace, createWorld } from './world.js'

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: path.resolve(import.meta.dirname, '..', 'dist', 'cli', 'main.js') },
    content: { type: 'string', default: '10000' },
    schemas: { type: 'string', default: '200' },
    media: { type: 'string', default: '1000' },
    'media-kb': { type: 'string', default: '20' },
    rounds: { type: 'string', default: '6' },
  },
})
if (!values.a) throw new Error('--a: the other build, e.g. ../other/dist/cli/main.js')
const BASELINE = path.resolve(import.meta.dirname, 'baselines', 'naive-pull.mjs')
const world = await createWorld({
  content: Number(values.content),
  schemas: Number(values.schemas),
  media: Number(values.media),
  mediaBytes: Number(values['media-kb']) * 1024,
})
const env = childEnv(world)
const clis: Record<'a' | 'b', string> = { a: path.resolve(values.a), b: path.resolve(values.b) }
const runs: Record<'a' | 'b' | 'base', ChildRun[]> = { a: [], b: [], base: [] }
const orders = [
  ['a', 'b', 'base'],
  ['base', 'b', 'a'],
  ['b', 'base', 'a'],
] as const
try {
  for (let i = 0; i < Number(values.rounds); i++) {
    for (const who of orders[i % orders.length]!) {
      if (who === 'base') {
        const dir = path.join(world.dir, `naive-${i}`)
        const args = [
          BASELINE,
          '--server',
          world.emulator.url,
          '--dir',
          dir,
          '--kinds',
          SYNCED_RESOURCES.join(','),
        ]
        runs.base.push(await runChild('node', args, { cwd: world.dir, env }))
        await rm(dir, { recursive: true, force: true })
      } else {
        const workspace = await createWorkspace(world, `${who}-${i}`, {
          resources: SYNCED_RESOURCES,
          ...FAST,
        })
        runs[who].push(await runChild('node', [clis[who], '-C', workspace, 'pull'], { cwd: workspace, env }))
        await rm(workspace, { recursive: true, force: true })
      }
      const last = runs[who].at(-1)!
      process.stderr.write(
        `round ${i + 1} ${who}: ${(last.wallMs / 1000).toFixed(2)} s wall, ${last.cpuSec.toFixed(2)} s CPU\n`,
      )
    }
  }
} finally {
  await world.close()
}
const baseWall = median(runs.base.map((r) => r.wallMs)) / 1000
const baseCpu = median(runs.base.map((r) => r.cpuSec))
for (const who of ['a', 'b', 'base'] as const) {
  const wall = median(runs[who].map((r) => r.wallMs)) / 1000
  const cpu = median(runs[who].map((r) => r.cpuSec))
  const name = who === 'base' ? 'baseline' : clis[who]
  process.stdout.write(
    `${name}: wall ${wall.toFixed(2)} s (${(wall / baseWall).toFixed(2)}x), CPU ${cpu.toFixed(2)} s (${(cpu / baseCpu).toFixed(2)}x)\n`,
  )
}
