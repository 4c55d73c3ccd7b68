// The state's storage, measured on its own (docs/benchmarks.md, "The state stored in buckets"):
// the bucketed store StateStore uses (record-store.ts) against the two forms it was chosen over,
// the single JSON file of earlier versions and an append-only log of records that is compacted.
// Per form: open and read one item, update one item with a durable save, read all items; and,
// for the store, the same save's cms-sync.lock spliced against the lock made whole.
//
//   npx tsx bench/state-store.ts [--items 100000] [--repeat 5]
//
// Medians of --repeat runs, in one process, files in the page cache (what a run meets on a
// machine that used the workspace a moment ago). Each form's fsyncs are the ones it needs to be
// crash-safe: the single file and the log fsync their one file, the store its buckets (one
// syncfs) and its index.

import { createHash } from 'node:crypto'
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { lineOf, lockText } from '../src/state/committed-base.js'
import { spliceLock } from '../src/state/lock-splice.js'
import { type ItemState, StateStore, type Target } from '../src/state/state-file.js'
import { writeFileAtomically } from '../src/util/atomic-write.js'

const { values } = parseArgs({
  options: { items: { type: 'string', default: '100000' }, repeat: { type: 'string', default: '5' } },
})
const ITEMS = Number(values.items)
const REPEAT = Number(values.repeat)
const target: Target = { server: 'https://cms.example', project: 'demo', environment: 'live' }

const hex = (text: string) => createHash('sha256').update(text).digest('hex')

function record(n: number, version = 0): ItemState {
  const id = `page-${n.toString().padStart(6, '0')}`
  return {
    kind: 'content',
    id,
    path: `content/${id}.json`,
    baseHash: hex(`${id}:${version}`),
    remoteRev: `2026-01-01T00:00:00.000Z#${hex(`rev:${id}:${version}`)}`,
    stat: { size: 900 + (n % 300), mtimeMs: 1_760_000_000_000 + n, ino: 1_000_000 + n },
    createDate: '2025-06-01T10:00:00.000Z',
  }
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

async function time(label: string, repeat: number, run: (i: number) => Promise<void> | void): Promise<void> {
  const samples: number[] = []
  for (let i = 0; i < repeat; i++) {
    const started = performance.now()
    await run(i)
    samples.push(performance.now() - started)
  }
  console.log(`${label.padEnd(58)} ${median(samples).toFixed(1).padStart(9)} ms`)
}

const items = Array.from({ length: ITEMS }, (_, n) => record(n))
const probe = items[Math.floor(ITEMS / 2)]!
const base = await mkdtemp(path.join(tmpdir(), 'cms-sync-state-bench-'))

try {
  console.log(`${ITEMS} records, medians of ${REPEAT}\n`)

  // The single file (state.json of earlier versions).
  const single = path.join(base, 'single', 'state.json')
  await mkdir(path.dirname(single), { recursive: true })
  const whole = { version: 2, target, items: Object.fromEntries(items.map((it) => [it.path, it])) }
  await writeFileAtomically(single, JSON.stringify(whole))
  console.log(`single file: ${(readFileSync(single).length / 1e6).toFixed(1)} MB`)
  await time('single file: open + read one item', REPEAT, () => {
    const state = JSON.parse(readFileSync(single, 'utf8'))
    if (!state.items[probe.path]) throw new Error('missing')
  })
  await time('single file: update one item + durable save', REPEAT, async (i) => {
    const state = JSON.parse(readFileSync(single, 'utf8'))
    state.items[probe.path] = record(Math.floor(ITEMS / 2), i + 1)
    await writeFileAtomically(single, JSON.stringify(state))
  })
  await time('single file: read all items', REPEAT, () => {
    Object.values(JSON.parse(readFileSync(single, 'utf8')).items)
  })

  // An append-only log: a line per record written, the last line of a path wins.
  const log = path.join(base, 'log', 'state.log')
  await mkdir(path.dirname(log), { recursive: true })
  await writeFileAtomically(log, `${items.map((it) => JSON.stringify(it)).join('\n')}\n`)
  const readLog = () => {
    const latest = new Map<string, ItemState>()
    for (const line of readFileSync(log, 'utf8').split('\n')) {
      if (line === '') continue
      const item = JSON.parse(line) as ItemState
      latest.set(item.path, item)
    }
    return latest
  }
  await time('append-only log: open + read one item', REPEAT, () => {
    if (!readLog().get(probe.path)) throw new Error('missing')
  })
  await time('append-only log: update one item + durable append', REPEAT, (i) => {
    const fd = openSync(log, 'a')
    try {
      writeSync(fd, `${JSON.stringify(record(Math.floor(ITEMS / 2), i + 1))}\n`)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  })
  await time('append-only log: read all items', REPEAT, () => {
    readLog()
  })
  await time('append-only log: compaction (rewrite whole)', REPEAT, async () => {
    const latest = readLog()
    await writeFileAtomically(log, `${[...latest.values()].map((it) => JSON.stringify(it)).join('\n')}\n`)
  })

  // The bucketed store, through StateStore (a save also writes cms-sync.lock).
  const root = path.join(base, 'store')
  await mkdir(root, { recursive: true })
  const first = new StateStore(root, { version: 2, target, items: whole.items })
  await first.save()
  await time('bucketed store: open + read one item', REPEAT, async () => {
    const store = await StateStore.open(root)
    if (!store?.get(probe.path)) throw new Error('missing')
  })
  await time('bucketed store: update one item + durable save (+ lock splice)', REPEAT, async (i) => {
    const store = (await StateStore.open(root))!
    store.lockUnmoved()
    await store.commit(record(Math.floor(ITEMS / 2), i + 1))
    await store.flush()
  })
  await time('bucketed store: read all items', REPEAT, async () => {
    const store = (await StateStore.open(root))!
    if (store.items().length !== ITEMS) throw new Error('count')
  })
  const lock = Buffer.from(lockText(target, items))
  await time("cms-sync.lock: one item's line spliced into the text", REPEAT, (i) => {
    const changed = record(Math.floor(ITEMS / 2), i + 100)
    if (spliceLock(lock, [{ path: changed.path, line: lineOf(changed) }]) === undefined)
      throw new Error('same')
  })
  await time('cms-sync.lock: made whole from every item (the former save)', REPEAT, () => {
    lockText(target, items)
  })
} finally {
  await rm(base, { recursive: true, force: true })
}
