// `cms-sync watch` as a real daemon on the pulled workspace: time to ready, idle CPU and
// resident memory over a quiet period, then save-to-server latency over a series of edits
// (each edit saved, then the emulator polled until it holds the new value).

import { spawn } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { names } from '../../src/emulator/store.js'
import type { BenchContext } from '../context.js'
import { median, percentile } from '../measure.js'
import type { Row } from '../report.js'
import { childEnv, cliArgs, contentId } from '../world.js'

const READY = /\b(ready|watching)\b/i
const TICKS_PER_SECOND = 100

async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name (which may hold spaces): utime is the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

export async function watchScenario(ctx: BenchContext, workspace: string): Promise<Row[]> {
  const { world, options } = ctx
  const started = performance.now()
  const child = spawn('node', cliArgs(world, '-C', workspace, 'watch'), {
    cwd: workspace,
    env: childEnv(world),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  let readyAt: number | undefined
  const onData = (chunk: Buffer) => {
    output += String(chunk)
    if (readyAt === undefined && READY.test(output)) readyAt = performance.now()
  }
  child.stdout.on('data', onData)
  child.stderr.on('data', onData)
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  try {
    await until(
      () => readyAt !== undefined,
      60_000,
      `watch to say it is ready (output: ${output.slice(-500)})`,
    )
    const readyMs = readyAt! - started
    ctx.log(`watch ready after ${readyMs.toFixed(0)} ms; idle for ${options.idleSeconds} s`)
    // Let the first reconcile settle before the quiet period counts.
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const ticksBefore = await cpuTicks(child.pid!)
    const idleStart = performance.now()
    await new Promise((resolve) => setTimeout(resolve, options.idleSeconds * 1000))
    const idleCpu = ((await cpuTicks(child.pid!)) - ticksBefore) / TICKS_PER_SECOND
    const idleCpuPercent = (idleCpu / ((performance.now() - idleStart) / 1000)) * 100
    const idleRss = await rssMb(child.pid!)

    const collection = names.env('demo', 'live', 'content')
    const latencies: number[] = []
    const edits = Math.min(options.edits, world.sizes.content)
    ctx.log(`watch: ${edits} edits`)
    for (let i = 0; i < edits; i++) {
      const id = contentId(world.sizes.content - 1 - i)
      const file = path.join(workspace, 'content', `${id}.json`)
      const item = JSON.parse(await readFile(file, 'utf8'))
      const title = `Watched edit ${i}`
      item.properties.title = title
      const saved = performance.now()
      await writeFile(file, `${JSON.stringify(item, null, 2)}\n`)
      const onServer = () =>
        world.emulator.store.get<{ properties: { title: string } }>(collection, id)?.properties.title ===
        title
      await until(onServer, 30_000, `edit ${i} of ${id} to reach the server`)
      latencies.push(performance.now() - saved)
    }
    return [
      {
        scenario: 'watch: save-to-server p95',
        cms: percentile(latencies, 95),
        unit: 'ms',
        target: '< 250 ms',
        pass: percentile(latencies, 95) < 250,
        note: `median ${median(latencies).toFixed(0)} ms over ${edits} edits`,
      },
      { scenario: 'watch: save-to-server median', cms: median(latencies), unit: 'ms', target: '-' },
      {
        scenario: 'watch: idle CPU',
        cms: idleCpuPercent,
        unit: '%',
        target: '< 1 %',
        pass: idleCpuPercent < 1,
      },
      { scenario: 'watch: idle RSS', cms: idleRss, unit: 'MB', target: '< 150 MB', pass: idleRss < 150 },
      {
        scenario: 'watch: time to ready',
        cms: readyMs / 1000,
        unit: 's',
        target: '< 2 s',
        pass: readyMs < 2000,
      },
    ]
  } finally {
    child.kill('SIGINT')
    await exited
  }
}
