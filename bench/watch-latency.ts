// `cms-sync watch` end to end on a large workspace: the real daemon (dist/cli/main.js) as a child
// process against the in-process emulator. Measures time to ready (start-up reconcile included),
// idle CPU and memory of the daemon (its polls included), and save-to-server latency: write a
// file, then watch the emulator's store until it holds the edit. Prints one JSON line.
//   npm run build && npx tsx bench/watch-latency.ts --files 10000 --edits 200 --idle-seconds 20

import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { run } from '../src/cli/program.js'
import { startEmulator } from '../src/emulator/index.js'
import { contentFile, SECTION_SCHEMA } from '../test/helpers/fixtures.js'

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '10000' },
    edits: { type: 'string', default: '200' },
    'idle-seconds': { type: 'string', default: '20' },
    'poll-seconds': { type: 'string', default: '10' },
    'debounce-ms': { type: 'string', default: '100' },
    dialect: { type: 'string', default: 'spec' },
  },
})
const files = Number(values.files)
const edits = Number(values.edits)
const idleSeconds = Number(values['idle-seconds'])
const dialect = values.dialect === 'upstream' ? 'upstream' : 'spec'
const MAIN_JS = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const round = (x: number, digits = 1) => Number(x.toFixed(digits))
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

/** A workspace folder with one schema and `n` content files: the emulator is seeded from it. */
async function seedFolder(n: number): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cms-sync-bench-seed-'))
  await mkdir(path.join(dir, 'schemas'))
  await mkdir(path.join(dir, 'content'))
  await writeFile(path.join(dir, 'schemas', 'section.json'), json(SECTION_SCHEMA))
  for (let i = 0; i < n; i += 500) {
    const batch = Array.from({ length: Math.min(500, n - i) }, (_, k) => `node-${i + k}`)
    await Promise.all(
      batch.map((id) => writeFile(path.join(dir, 'content', `${id}.json`), json(contentFile(id)))),
    )
  }
  return dir
}

/** user+system CPU seconds and resident memory of a process, from /proc (Linux). */
function procUsage(pid: number): { cpuSeconds: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[11]) + Number(fields[12]) // utime, stime (fields 14 and 15)
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
  return { cpuSeconds: ticks / 100, rssMb: rssKb / 1024 }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

const seed = await seedFolder(files)
const emulator = await startEmulator({ port: 0, dialect, seedDir: seed })
const base = await mkdtemp(path.join(tmpdir(), 'cms-sync-bench-'))
const root = path.join(base, 'site')
await mkdir(root)
await writeFile(
  path.join(root, 'cms-sync.yaml'),
  [
    `server: ${emulator.url}`,
    'project: demo',
    'environment: live',
    'resources: [schemas, content]',
    `dialect: ${dialect}`,
    `watch: { debounceMs: ${Number(values['debounce-ms'])}, pollSeconds: ${Number(values['poll-seconds'])} }`,
    '',
  ].join('\n'),
)
const env = { ...process.env, CMS_SYNC_TOKEN: emulator.token(), XDG_CONFIG_HOME: path.join(base, 'xdg') }
const quiet = () => new PassThrough().resume()
const cloneStart = performance.now()
const cloned = await run(['-C', root, '-q', 'pull'], {
  stdout: quiet(),
  stderr: quiet(),
  env,
  cwd: root,
  stopSignal: new Promise(() => {}),
})
const cloneMs = performance.now() - cloneStart
if (cloned !== 0) throw new Error(`the first pull failed with exit ${cloned}`)

const contentCollection = emulator.store.collectionNames().find((c) => c.includes('content'))
if (!contentCollection) throw new Error('no content collection in the emulator store')
const titleOnServer = (id: string) =>
  emulator.store.get<{ properties?: { title?: string } }>(contentCollection, id)?.properties?.title

try {
  const startedAt = performance.now()
  const daemon = spawn(process.execPath, [MAIN_JS, '--json', 'watch'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise<number | null>((resolve) => daemon.once('exit', (code) => resolve(code)))
  let out = ''
  daemon.stdout.on('data', (c) => {
    out += String(c)
  })
  while (!out.includes('"event":"ready"')) {
    if (daemon.exitCode !== null) throw new Error(`watch exited with ${daemon.exitCode}`)
    await sleep(10)
  }
  const timeToReadyMs = performance.now() - startedAt
  const pid = daemon.pid as number

  // Idle: nothing changes; the daemon still polls the server every pollSeconds.
  const before = procUsage(pid)
  const idleStart = performance.now()
  await sleep(idleSeconds * 1000)
  const after = procUsage(pid)
  const idleCpuPercent =
    ((after.cpuSeconds - before.cpuSeconds) / ((performance.now() - idleStart) / 1000)) * 100

  // Save-to-server latency, one edit at a time, spread over the workspace.
  const latencies: number[] = []
  for (let i = 0; i < edits; i++) {
    const id = `node-${(i * 7919) % files}`
    const title = `edit ${i}`
    const editAt = performance.now()
    await writeFile(
      path.join(root, 'content', `${id}.json`),
      json(contentFile(id, { properties: { title } })),
    )
    while (titleOnServer(id) !== title) {
      if (performance.now() - editAt > 60_000) throw new Error(`edit ${i} of ${id} never reached the server`)
      await sleep(2)
    }
    latencies.push(performance.now() - editAt)
  }
  const peak = procUsage(pid)

  const stopAt = performance.now()
  daemon.kill('SIGTERM')
  const exitCode = await exited
  const sorted = [...latencies].sort((a, b) => a - b)
  process.stdout.write(
    `${JSON.stringify({
      bench: 'watch-latency',
      files,
      edits,
      dialect,
      cloneMs: round(cloneMs, 0),
      timeToReadyMs: round(timeToReadyMs, 0),
      idleSeconds,
      idleCpuPercent: round(idleCpuPercent, 2),
      idleRssMb: round(after.rssMb),
      rssAfterEditsMb: round(peak.rssMb),
      latencyMs: {
        median: round(percentile(sorted, 50), 0),
        p95: round(percentile(sorted, 95), 0),
        max: round(sorted.at(-1) ?? Number.NaN, 0),
      },
      shutdownMs: round(performance.now() - stopAt, 0),
      exitCode,
      node: process.version,
    })}\n`,
  )
} finally {
  await emulator.close()
  await rm(base, { recursive: true, force: true })
  await rm(seed, { recursive: true, force: true })
}
