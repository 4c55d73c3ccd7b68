// A whole-workspace status that finds nothing changed answers from the listings' 304s and the
// files' stats, with no plan of every item (engine/unchanged-run.ts), and says so in its log.
// What must hold: its answer is exactly the full run's (the `--json` document, the text and
// the exit code, `--exit-code` included), and any doubt (a file whose stat moved, a new or
// deleted file, a server change, a conflict, a stray, a pause, media the listing cannot vouch
// for) is either the full run's answer or the same answer reached by the full run.
// "The full run" here is the same status with the recorded validators taken out of the state:
// every listing read and compared in full, every item planned.

import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { setPause } from '../../src/watch/mass-change.js'
import { runBuilt } from '../helpers/built-cli.js'
import { contentFile } from '../helpers/fixtures.js'
import { editKeepingStat } from '../helpers/same-stat.js'
import { type CliRun, startWorld, syncedWorld, type World } from '../helpers/sync-world.js'

const SKIPPED =
  'nothing changed: every listing is the bases and every file has its recorded stat; no plan made'

let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

/** The log entries written since `from` lines (.cms-sync/logs/cms-sync.log). */
async function logSince(w: World, from: number): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(w.file('.cms-sync/logs/cms-sync.log'), 'utf8').catch(() => '')
  return text
    .trim()
    .split('\n')
    .slice(from)
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

async function logLength(w: World): Promise<number> {
  return (await logSince(w, 0)).length
}

/** Runs `args` with the state as it is, then with no validator recorded (the full run); restores the state. */
async function bothWays(
  w: World,
  ...args: string[]
): Promise<{ fast: CliRun; full: CliRun; skipped: Record<string, unknown> | undefined }> {
  const start = await logLength(w)
  const fast = await w.cli(...args)
  const skipped = (await logSince(w, start)).find((entry) => entry.msg === SKIPPED)
  const file = w.file('.cms-sync/state/index.json')
  const text = await readFile(file, 'utf8')
  const { validators: _dropped, ...rest } = JSON.parse(text)
  await writeFile(file, JSON.stringify(rest))
  try {
    const before = await logLength(w)
    const full = await w.cli(...args)
    expect((await logSince(w, before)).some((entry) => entry.msg === SKIPPED)).toBe(false)
    return { fast, full, skipped }
  } finally {
    await writeFile(file, text)
  }
}

/** The two runs agree: JSON document, text, exit code, with and without --exit-code. */
async function expectSameAnswers(w: World): Promise<{ skipped: boolean; json: Record<string, unknown> }> {
  const json = await bothWays(w, '--json', 'status')
  expect(json.fast.json).toEqual(json.full.json)
  expect(json.fast.exitCode).toBe(json.full.exitCode)
  const text = await bothWays(w, 'status', '--exit-code')
  expect(text.fast.stdout).toBe(text.full.stdout)
  expect(text.fast.exitCode).toBe(text.full.exitCode)
  expect(!!text.skipped).toBe(!!json.skipped)
  return { skipped: !!json.skipped, json: json.fast.json }
}

/** A sync twice: the second records every listing's validator (the first pushed or pulled). */
async function settled(w: World): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const run = await w.cli('sync')
    expect(run.exitCode, run.stderr).toBe(0)
  }
}

describe.each(['spec', 'upstream'] as const)('a no-change status without a plan (%s dialect)', (dialect) => {
  test('a clean workspace: answered from the 304s and the stats, as the full run answers it', async () => {
    world = await syncedWorld(dialect)
    await settled(world)
    const start = await logLength(world)
    const run = await world.cli('--json', 'status')
    expect(run.exitCode).toBe(0)
    expect(run.json.clean).toBe(true)
    const said = (await logSince(world, start)).find((entry) => entry.msg === SKIPPED)
    if (dialect === 'spec') {
      // Every item vouched for by its stat and its kind's 304: 4 content, 1 schema.
      expect(said).toMatchObject({ items: 5, notModified: 2, readInFull: [] })
    } else {
      // Upstream lists content without its dates: the schedule reads the files, so the full run does.
      expect(said).toBeUndefined()
    }
    const same = await expectSameAnswers(world)
    expect(same.skipped).toBe(dialect === 'spec')
  })

  test('a file touched with the same content: its stat moved, so the full run looks, and finds it clean', async () => {
    world = await syncedWorld(dialect)
    await settled(world)
    const later = new Date(Date.now() + 5_000)
    await utimes(world.file('content/home.json'), later, later)
    const same = await expectSameAnswers(world)
    expect(same.skipped).toBe(false)
    expect(same.json.clean).toBe(true)
  })

  test('an edit that keeps size and mtime: both runs trust the stat, as the stat cache always has', async () => {
    world = await syncedWorld(dialect)
    await settled(world)
    // Same length, same inode, the mtime put back to the nanosecond.
    await editKeepingStat(world.file('content/home.json'), '"title": "home"', '"title": "HOME"')
    const same = await expectSameAnswers(world)
    expect(same.skipped).toBe(dialect === 'spec')
    expect(same.json.clean).toBe(true)
  })

  test.each([
    ['a new file', 'push', async (w: World) => w.writeJson('content/fresh.json', contentFile('fresh'))],
    ['a deleted file', 'delete-remote', async (w: World) => w.remove('content/shop.json')],
    [
      'a local edit',
      'push',
      async (w: World) => w.editJson('content/home.json', { properties: { title: 'local' } }),
    ],
    ['a server edit', 'pull', async (w: World) => w.setContent('news', { properties: { title: 'remote' } })],
    [
      'a conflict',
      'conflict',
      async (w: World) => {
        await w.editJson('content/contact.json', { properties: { title: 'local' } })
        await w.setContent('contact', { properties: { title: 'remote' } })
      },
    ],
  ] as const)('%s: the full run answers (%s), the same both ways', async (_what, action, change) => {
    world = await syncedWorld(dialect)
    await settled(world)
    await change(world)
    const same = await expectSameAnswers(world)
    expect(same.skipped).toBe(false)
    expect(same.json.changes).toContainEqual(expect.objectContaining({ action }))
  })

  test.each([
    [
      'a deploy left pending in the state',
      async (w: World) => {
        // As a failed publish records it: the content write stands, the publish is still to do.
        const dir = w.file('.cms-sync/state')
        for (const name of await readdir(dir)) {
          if (name === 'index.json' || !name.endsWith('.json')) continue
          const records = JSON.parse(await readFile(`${dir}/${name}`, 'utf8')) as Array<
            Record<string, unknown>
          >
          if (!Array.isArray(records)) continue
          const home = records.find((record) => record.path === 'content/home.json')
          if (!home) continue
          home.deploy = 'publish'
          await writeFile(`${dir}/${name}`, JSON.stringify(records))
        }
      },
    ],
    [
      'a push a killed run may have landed (an open journal entry)',
      async (w: World) => {
        const line = JSON.stringify({ path: 'content/home.json', hash: 'f'.repeat(64) })
        await writeFile(w.file('.cms-sync/pushes.jsonl'), `${line}\n`)
      },
    ],
  ] as const)('%s: planned in full, the same both ways', async (_what, change) => {
    world = await syncedWorld(dialect)
    await settled(world)
    await change(world)
    const same = await expectSameAnswers(world)
    expect(same.skipped).toBe(false)
  })

  test("a stray file in a kind folder is the full run's to report", async () => {
    world = await syncedWorld(dialect)
    await settled(world)
    await writeFile(world.file('content/notes.txt'), 'mine')
    const same = await expectSameAnswers(world)
    expect(same.skipped).toBe(false)
    expect(same.json.notSynced).toEqual([expect.objectContaining({ path: 'content/notes.txt' })])
  })

  test('a paused watcher with nothing waiting: held as the full run holds it', async () => {
    world = await syncedWorld(dialect)
    await settled(world)
    await setPause(world.root, {
      since: new Date().toISOString(),
      reason: 'mass-change',
      count: 60,
      samplePaths: ['content/home.json'],
    })
    const same = await expectSameAnswers(world)
    expect(same.skipped).toBe(dialect === 'spec')
    expect(same.json.held).toEqual([expect.objectContaining({ guard: 'mass-change', action: 'push' })])
  })

  test('media: verified by the listing (spec) or listed as unverified (upstream), the same both ways', async () => {
    world = await startWorld(dialect, { content: ['home'], resources: ['schemas', 'media'] })
    const w = world
    await mkdir(w.file('media/img'), { recursive: true })
    await writeFile(w.file('media/img/one.png'), 'one')
    await writeFile(w.file('media/two.png'), 'two')
    for (let i = 0; i < 3; i++) expect((await w.cli('sync')).exitCode).toBe(0)
    const same = await expectSameAnswers(w)
    expect(same.skipped).toBe(true)
    if (dialect === 'upstream')
      expect((same.json.unverified as Array<{ path: string }>).map((u) => u.path)).toEqual([
        'media/img/one.png',
        'media/two.png',
      ])
    else expect(same.json.unverified).toBeUndefined()
    // The media listing read in full (a pull leaves its validator unrecorded) and found to be the
    // bases, item for item: still no plan, and the full run's answer.
    const file = w.file('.cms-sync/state/index.json')
    const text = await readFile(file, 'utf8')
    const index = JSON.parse(text)
    delete index.validators.media
    await writeFile(file, JSON.stringify(index))
    const start = await logLength(w)
    const listed = await w.cli('--json', 'status')
    expect((await logSince(w, start)).find((entry) => entry.msg === SKIPPED)).toMatchObject({
      readInFull: ['media'],
    })
    expect(listed.json).toEqual(same.json)
    await writeFile(file, text)
    // A media file touched: its stat moved, the full run hashes it, and finds it clean.
    const later = new Date(Date.now() + 5_000)
    await utimes(w.file('media/two.png'), later, later)
    const touched = await expectSameAnswers(w)
    expect(touched.skipped).toBe(false)
    expect(touched.json.changes).toEqual([])
  })
})

test('the shipped program: a no-change status skips the plan and prints what the full run prints', async () => {
  world = await syncedWorld('spec')
  await settled(world)
  const w = world
  const start = await logLength(w)
  const built = await runBuilt(['--json', 'status', '--exit-code'], { cwd: w.root, env: w.env })
  expect(built.code).toBe(0)
  expect((await logSince(w, start)).find((entry) => entry.msg === SKIPPED)).toMatchObject({ items: 5 })
  const file = w.file('.cms-sync/state/index.json')
  const { validators: _dropped, ...rest } = JSON.parse(await readFile(file, 'utf8'))
  await writeFile(file, JSON.stringify(rest))
  const full = await runBuilt(['--json', 'status', '--exit-code'], { cwd: w.root, env: w.env })
  expect(full.code).toBe(0)
  expect(built.json).toEqual(full.json)
})
