// Idle cost of `watch` on a large workspace: time to ready, CPU while nothing happens, memory,
// and how long one edit takes to come out of the watcher as a batch. Prints one JSON line.
//   npx tsx bench/watch-idle.ts --files 10000 --seconds 20

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { watchWorkspace } from '../src/watch/local-changes.js'
import { loadIgnoreRules } from '../src/workspace/ignore-rules.js'

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '20' },
    debounce: { type: 'string', default: '100' },
  },
})
const fileCount = Number(values.files)
const idleSeconds = Number(values.seconds)
const debounceMs = Number(values.debounce)

/** Roughly a real site: mostly content, media in folders of 100, a few schemas, forms, connections. */
function layout(n: number): string[] {
  const share = { content: 0.6, media: 0.3, schemas: 0.05, forms: 0.03 }
  const paths: string[] = []
  for (let i = 0; i < Math.round(n * share.content); i++) paths.push(`content/node-${i}.json`)
  for (let i = 0; i < Math.round(n * share.media); i++)
    paths.push(`media/folder-${Math.floor(i / 100)}/image-${i}.png`)
  for (let i = 0; i < Math.round(n * share.schemas); i++) paths.push(`schemas/schema-${i}.json`)
  for (let i = 0; i < Math.round(n * share.forms); i++) paths.push(`forms/form-${i}.json`)
  for (let i = 0; paths.length < n; i++) paths.push(`connections/connection-${i}.json`)
  return paths
}

async function createWorkspace(paths: string[]): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'cms-sync-bench-'))
  for (const dir of new Set(paths.map((p) => path.dirname(p))))
    await mkdir(path.join(root, dir), { recursive: true })
  const body = `${JSON.stringify({ title: 'A page', body: 'x'.repeat(400) }, null, 2)}\n`
  for (let i = 0; i < paths.length; i += 200) {
    await Promise.all(paths.slice(i, i + 200).map((p) => writeFile(path.join(root, p), body)))
  }
  return root
}

const root = await createWorkspace(layout(fileCount))
try {
  let onBatchSeen: ((paths: Set<string>) => void) | undefined
  const rssBeforeMb = process.memoryUsage().rss / 2 ** 20
  const watcher = watchWorkspace(root, {
    debounceMs,
    ignoreRules: await loadIgnoreRules(root),
    onBatch: (paths) => onBatchSeen?.(paths),
    onError: (error) => process.stderr.write(`watch error: ${String(error)}\n`),
  })
  await watcher.ready

  const cpuStart = process.cpuUsage()
  const wallStart = performance.now()
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1_000))
  const cpu = process.cpuUsage(cpuStart)
  const idleWallMs = performance.now() - wallStart
  const rssMb = process.memoryUsage().rss / 2 ** 20

  // One edit after the idle period: from the write to the batch (debounce included).
  const edited = 'content/node-0.json'
  const batchArrived = new Promise<void>((resolve) => {
    onBatchSeen = (paths) => paths.has(edited) && resolve()
  })
  const editAt = performance.now()
  await writeFile(path.join(root, edited), '{"title":"edited"}\n')
  await batchArrived
  const editToBatchMs = performance.now() - editAt

  await watcher.close()
  const round = (x: number, digits = 1) => Number(x.toFixed(digits))
  const result = {
    files: fileCount,
    idleSeconds,
    timeToReadyMs: round(watcher.timeToReadyMs ?? Number.NaN, 0),
    idleCpuPercent: round(((cpu.user + cpu.system) / 1_000 / idleWallMs) * 100, 2),
    rssMb: round(rssMb),
    rssBeforeWatchMb: round(rssBeforeMb),
    heapUsedMb: round(process.memoryUsage().heapUsed / 2 ** 20),
    debounceMs,
    editToBatchMs: round(editToBatchMs, 0),
    node: process.version,
  }
  process.stdout.write(`${JSON.stringify(result)}\n`)
} finally {
  await rm(root, { recursive: true, force: true })
}
