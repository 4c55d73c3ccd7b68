// npm run bench -- --content 10000 --schemas 200 --media 2000 --json out.json
// Generates an environment in the emulator on loopback, then measures cms-sync (the built CLI,
// as a child process) against baselines measured in the same run on the same machine, and
// prints scenario, cms-sync, baseline, ratio, target, result. Exits 1 only when a scenario
// errors; a missed target is reported, not fatal (`--strict` makes it fatal).
// Issue 25 compares some figures with the same figure at 1,000 content: a reference world of
// `--reference-content` items (schemas and media scaled alike) is measured first, in the same run;
// when the world is no larger, its own figures are the reference.

import { writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import type { BenchContext } from './context.js'
import { median, runChild } from './measure.js'
import { formatTable, type Row } from './report.js'
import { measureOneFile, type OneFile, oneFileRows, oneItemFloor } from './scenarios/one-file.js'
import { pullOnce, pullScenario } from './scenarios/pull.js'
import { pushScenario } from './scenarios/push.js'
import { statusScenario } from './scenarios/status.js'
import { measureWatch, type WatchFigures, watchRows } from './scenarios/watch.js'
import { createWorld, type Sizes } from './world.js'

const { values } = parseArgs({
  options: {
    content: { type: 'string', default: '10000' },
    schemas: { type: 'string', default: '200' },
    media: { type: 'string', default: '2000' },
    'media-kb': { type: 'string', default: '20' },
    repeat: { type: 'string', default: '3' },
    rate: { type: 'string', default: '50' },
    'push-files': { type: 'string', default: '1000' },
    edits: { type: 'string', default: '200' },
    'idle-seconds': { type: 'string', default: '60' },
    'reference-content': { type: 'string', default: '1000' },
    json: { type: 'string' },
    strict: { type: 'boolean', default: false },
    profile: { type: 'string' },
    only: { type: 'string', default: 'pull,status,one-file,watch,push' },
  },
})
const int = (name: keyof typeof values) => {
  const n = Number(values[name])
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`--${name} must be a whole number, got "${values[name]}"`)
  return n
}

/** Node's own start on this machine (median of 5), as the children run it and as the shell would. */
async function nodeStartSeconds(): Promise<{ bare: number; withExtraCaCerts?: number }> {
  const time = async (env: NodeJS.ProcessEnv) => {
    const runs = []
    for (let i = 0; i < 5; i++)
      runs.push((await runChild('node', ['-e', '0'], { cwd: os.tmpdir(), env })).wallMs)
    return median(runs) / 1000
  }
  const { NODE_EXTRA_CA_CERTS: extra, ...bare } = process.env
  return { bare: await time(bare), ...(extra ? { withExtraCaCerts: await time(process.env) } : {}) }
}

const wanted = (scenario: string) => values.only.split(',').includes(scenario)
const log = (line: string) => process.stderr.write(`bench: ${line}\n`)
const sizes = {
  content: int('content'),
  schemas: int('schemas'),
  media: int('media'),
  mediaBytes: int('media-kb') * 1024,
}
const options: BenchContext['options'] = {
  repeat: Math.max(1, int('repeat')),
  rate: Math.max(1, int('rate')),
  pushFiles: int('push-files'),
  edits: int('edits'),
  idleSeconds: int('idle-seconds'),
}
const started = Date.now()
const rows: Row[] = []
let failed: Error | undefined

/**
 * Runs one scenario; an error is reported as a row and the run goes on to the next (a slow
 * scenario at 100,000 items must not cost the figures of the others). The run still exits 1.
 */
async function attempt<T>(scenario: string, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run()
  } catch (error) {
    failed ??= error as Error
    log(`${scenario} failed: ${(error as Error).stack ?? String(error)}`)
    rows.push({
      scenario,
      unit: '',
      target: '-',
      pass: false,
      note: `failed: ${(error as Error).message.slice(0, 60)}`,
    })
    return undefined
  }
}

/** The reference world's figures: the one-file push and the watch edits at --reference-content. */
async function measureReference(refSizes: Sizes) {
  log(`reference world: ${refSizes.content} content, ${refSizes.schemas} schemas, ${refSizes.media} media`)
  const world = await createWorld(refSizes)
  if (values.profile) world.profileDir = path.resolve(values.profile)
  try {
    const ctx: BenchContext = { world, options, log: (line) => log(`reference: ${line}`) }
    const workspace = await pullOnce(ctx, 'reference')
    const oneFile = wanted('one-file') ? await measureOneFile(ctx, workspace) : undefined
    const watch = wanted('watch') ? await measureWatch(ctx, workspace, 0) : undefined
    return { oneFile, watch }
  } finally {
    await world.close()
  }
}

const refContent = int('reference-content')
let reference: { oneFile?: OneFile; watch?: WatchFigures } = {}
if ((wanted('one-file') || wanted('watch')) && refContent < sizes.content) {
  try {
    reference = await measureReference({
      content: refContent,
      schemas: Math.max(1, Math.min(sizes.schemas, refContent)),
      media: Math.round((sizes.media * refContent) / sizes.content),
      mediaBytes: sizes.mediaBytes,
    })
  } catch (error) {
    failed = error as Error
  }
}
const refLabel = Math.min(refContent, sizes.content)

if (!failed) {
  log(`generating ${sizes.content} content, ${sizes.schemas} schemas, ${sizes.media} media in the emulator`)
  const world = await createWorld(sizes)
  if (values.profile) world.profileDir = path.resolve(values.profile)
  try {
    const ctx: BenchContext = { world, options, log }
    // The pull always runs: the other scenarios start from the workspace it leaves.
    const pull = await pullScenario(ctx)
    rows.push(...pull.rows)
    if (wanted('status'))
      rows.push(...((await attempt('no-change status', () => statusScenario(ctx, pull.workspace))) ?? []))
    // One file pushed leaves the workspace clean again, as watch needs it.
    const oneFile = wanted('one-file')
      ? await attempt('one-file push', () => measureOneFile(ctx, pull.workspace))
      : undefined
    const oneFileAt = rows.length
    // Watch before push: it needs the clean workspace the pull left, and push edits files.
    if (wanted('watch')) {
      const figures = await attempt('watch', () => measureWatch(ctx, pull.workspace, options.idleSeconds))
      const latencies = reference.watch?.latencies ?? figures?.latencies
      if (figures && latencies) rows.push(...watchRows(ctx, figures, { content: refLabel, latencies }))
    }
    if (wanted('push')) rows.push(...((await attempt('push', () => pushScenario(ctx, pull.workspace))) ?? []))
    if (oneFile) {
      // Last: the floor's writes reach the server behind every workspace's back.
      const floor = await attempt('one-file floor', () => oneItemFloor(ctx))
      const pushWall = (reference.oneFile ?? oneFile).pushWall
      rows.splice(oneFileAt, 0, ...oneFileRows(ctx, oneFile, floor, { content: refLabel, pushWall }))
    }
  } catch (error) {
    failed = error as Error
  } finally {
    await world.close()
  }
}

process.stdout.write(`${formatTable(rows)}\n`)
const nodeStart = await nodeStartSeconds()
log(
  `node -e 0 takes ${nodeStart.bare.toFixed(2)} s here` +
    (nodeStart.withExtraCaCerts === undefined
      ? ''
      : `, ${nodeStart.withExtraCaCerts.toFixed(2)} s with this machine's NODE_EXTRA_CA_CERTS (left out of every child; see world.ts)`),
)
const machine = {
  nodeStartSeconds: nodeStart,
  node: process.version,
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model,
  memoryGb: Math.round(os.totalmem() / 2 ** 30),
  loadAverage: os.loadavg().map((x) => Number(x.toFixed(2))),
}
if (values.json) {
  const report = {
    date: new Date(started).toISOString(),
    seconds: (Date.now() - started) / 1000,
    sizes,
    machine,
    rows,
    error: failed?.message,
  }
  await writeFile(values.json, `${JSON.stringify(report, null, 2)}\n`)
}
if (failed) {
  process.stderr.write(`bench: a scenario failed: ${failed.stack ?? failed.message}\n`)
  process.exit(1)
}
if (values.strict && rows.some((r) => r.pass === false)) process.exit(1)
