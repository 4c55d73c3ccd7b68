// `cms-sync watch` as a real daemon (`--json`) on the pulled workspace: time to ready (spawn to
// the `ready` event: the watcher is set up, an edit from then on is queued), the start-up
// reconcile that follows it, idle CPU and resident memory over `--idle-seconds` with the remote
// poll running, then save-to-server latency over `--edits` edits (each file saved, then the
// emulator's store polled until it holds the new value).
//   npm run bench -- --only watch --repeat 1 [--content 10000 --edits 200 --idle-seconds 60]

import { spawn } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { names } from '../../src/emulator/store.js'
import type { BenchContext } from '../context.js'
import { median, percentile } from '../measure.js'
import type { Row } from '../report.js'
import { childEnv, cliArgs, contentId } from '../world.js'

const TICKS_PER_SECOND = 100
/** How often RSS is sampled during the idle period (its peak is the figure). */
const RSS_SAMPLE_MS = 1000

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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(check: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what()}`)
    await sleep(2)
  }
}

type Event = { event: string; [field: string]: unknown }

/** How many files the edits go round (under the mass change guard's 50 in 10 s). */
const EDITED_FILES = 40

export async function watchScenario(ctx: BenchContext, workspace: string): Promise<Row[]> {
  const { world, options } = ctx
  const started = performance.now()
  const child = spawn('node', cliArgs(world, '-C', workspace, '--json', 'watch'), {
    cwd: workspace,
    env: childEnv(world),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const events: Array<Event & { at: number }> = []
  let buffered = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += String(chunk)
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      if (line.trim()) events.push({ ...(JSON.parse(line) as Event), at: performance.now() })
    }
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += String(chunk)
  })
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  const seen = (name: string) => events.find((e) => e.event === name)
  const output = () => `events ${JSON.stringify(events.slice(-5))}, stderr ${stderr.slice(-500)}`
  try {
    await until(
      () => seen('ready') !== undefined,
      60_000,
      () => `watch to be ready (${output()})`,
    )
    const readyMs = seen('ready')!.at - started
    await until(
      () => seen('reconciled') !== undefined,
      300_000,
      () => `the start-up reconcile (${output()})`,
    )
    const reconcileMs = seen('reconciled')!.at - seen('ready')!.at
    ctx.log(
      `watch ready after ${readyMs.toFixed(0)} ms, start-up reconcile ${reconcileMs.toFixed(0)} ms; idle for ${options.idleSeconds} s`,
    )
    const ticksBefore = await cpuTicks(child.pid!)
    const idleStart = performance.now()
    let peakRss = await rssMb(child.pid!)
    while (performance.now() - idleStart < options.idleSeconds * 1000) {
      await sleep(Math.min(RSS_SAMPLE_MS, options.idleSeconds * 1000 - (performance.now() - idleStart)))
      peakRss = Math.max(peakRss, await rssMb(child.pid!))
    }
    const idleCpu = ((await cpuTicks(child.pid!)) - ticksBefore) / TICKS_PER_SECOND
    const idleCpuPercent = (idleCpu / ((performance.now() - idleStart) / 1000)) * 100

    const collection = names.env('demo', 'live', 'content')
    const latencies: number[] = []
    const edits = options.edits
    ctx.log(`watch: ${edits} edits of ${Math.min(EDITED_FILES, world.sizes.content)} files`)
    for (let i = 0; i < edits; i++) {
      // An editing session: the same few dozen files saved again and again. More distinct files
      // than watch.massChange.files (50) within 10 s would be a mass change, which pauses.
      const id = contentId(world.sizes.content - 1 - (i % Math.min(EDITED_FILES, world.sizes.content)))
      const file = path.join(workspace, 'content', `${id}.json`)
      const item = JSON.parse(await readFile(file, 'utf8'))
      const title = `Watched edit ${i}`
      item.properties.title = title
      const saved = performance.now()
      await writeFile(file, `${JSON.stringify(item, null, 2)}\n`)
      const onServer = () =>
        world.emulator.store.get<{ properties: { title: string } }>(collection, id)?.properties.title ===
        title
      await until(onServer, 30_000, () => `edit ${i} of ${id} to reach the server (${output()})`)
      latencies.push(performance.now() - saved)
    }
    const p95 = percentile(latencies, 95)
    return [
      {
        scenario: 'watch: save-to-server p95',
        cms: p95,
        unit: 'ms',
        target: '< 250 ms',
        pass: p95 < 250,
        note: `over ${edits} edits: median ${median(latencies).toFixed(0)}, p90 ${percentile(latencies, 90).toFixed(0)}, p99 ${percentile(latencies, 99).toFixed(0)}, max ${Math.max(...latencies).toFixed(0)} ms`,
      },
      { scenario: 'watch: save-to-server median', cms: median(latencies), unit: 'ms', target: '-' },
      {
        scenario: 'watch: idle CPU',
        cms: idleCpuPercent,
        unit: '%',
        target: '< 1 %',
        pass: idleCpuPercent < 1,
        note: `over ${options.idleSeconds} s after the start-up reconcile, remote polls included`,
      },
      {
        scenario: 'watch: idle RSS (peak)',
        cms: peakRss,
        unit: 'MB',
        target: '< 150 MB',
        pass: peakRss < 150,
      },
      {
        scenario: 'watch: time to ready',
        cms: readyMs / 1000,
        unit: 's',
        target: '< 2 s',
        pass: readyMs < 2000,
      },
      { scenario: 'watch: start-up reconcile', cms: reconcileMs / 1000, unit: 's', target: '-' },
    ]
  } finally {
    child.kill('SIGINT')
    await exited
  }
}
