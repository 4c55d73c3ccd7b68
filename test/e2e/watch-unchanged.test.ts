// A full run of `watch` (the start-up reconcile, a poll whose listing changed) that finds nothing
// changed makes no plan of every item (engine/unchanged-run.ts), as a no-change status does, and
// still does what the full run does at its end: the listings' validators it read in full are
// recorded (a push before the watch dropped them; a pull leaves media's unrecorded), the state is
// saved, `reconciled` comes, and the daemon then syncs edits on either side as before.

import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { afterEach, expect, test } from 'vitest'
import { startWorld, syncedWorld, type World } from '../helpers/sync-world.js'
import { serverTitle, setWatchConfig, watchInProcess } from '../helpers/watch.js'

const SKIPPED =
  'nothing changed: every listing is the bases and every file has its recorded stat; no plan made'

let world: World | undefined
let watching: ReturnType<typeof watchInProcess> | undefined
afterEach(async () => {
  await watching?.stop()
  await world?.close()
  watching = undefined
  world = undefined
})

async function logEntries(w: World): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(w.file('.cms-sync/logs/cms-sync.log'), 'utf8').catch(() => '')
  return text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

type Index = { validators?: Record<string, unknown> }
const stateFile = (w: World) => w.file('.cms-sync/state/index.json')
const readIndex = async (w: World): Promise<Index> => JSON.parse(await readFile(stateFile(w), 'utf8'))

/** Takes the named validators out of the saved state (what a push before the watch leaves). */
async function dropValidators(w: World, names: readonly string[]): Promise<void> {
  const index = await readIndex(w)
  for (const name of names) delete index.validators?.[name]
  await writeFile(stateFile(w), JSON.stringify(index))
}

/** Starts the watch and waits for its start-up reconcile; returns the log entries it wrote. */
async function reconciled(w: World): Promise<Array<Record<string, unknown>>> {
  const from = (await logEntries(w)).length
  await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
  watching = watchInProcess(w.root, w.env)
  await watching.waitForEvent({ event: 'reconciled' })
  return (await logEntries(w)).slice(from)
}

test('the start-up reconcile of an unchanged workspace makes no plan; edits on either side sync after it', async () => {
  world = await syncedWorld('spec')
  const w = world
  // The second sync records every listing's validator (the first pulled).
  expect((await w.cli('sync')).exitCode).toBe(0)
  const entries = await reconciled(w)
  expect(entries.find((entry) => entry.msg === SKIPPED)).toMatchObject({
    items: 5,
    notModified: 2,
    readInFull: [],
  })
  expect(entries.filter((entry) => entry.msg === 'run finished')).toHaveLength(1)
  const d = watching!
  await w.editJson('content/home.json', { properties: { title: 'edited here' } })
  await d.waitForEvent({ event: 'pushed', path: 'content/home.json' })
  expect(await serverTitle(w.server, 'home')).toBe('edited here')
  await w.setContent('news', { properties: { title: 'edited there' } })
  await d.waitForEvent({ event: 'pulled', path: 'content/news.json' })
  expect(await w.readJson('content/news.json')).toMatchObject({ properties: { title: 'edited there' } })
  expect(d.events.filter((e) => e.event === 'failed' || e.event === 'conflict')).toEqual([])
})

test('listings read in full whose every item is its base: no plan, and their validators are recorded as the full run records them', async () => {
  world = await syncedWorld('spec')
  const w = world
  expect((await w.cli('sync')).exitCode).toBe(0)
  const recorded = (await readIndex(w)).validators
  expect(Object.keys(recorded ?? {}).sort()).toEqual(['content', 'schemas'])
  await dropValidators(w, ['content', 'schemas'])
  const entries = await reconciled(w)
  expect(entries.find((entry) => entry.msg === SKIPPED)).toMatchObject({
    items: 5,
    notModified: 0,
    readInFull: ['schemas', 'content'],
  })
  // Saved at the end of the run, before `reconciled`: the next start asks with them again.
  expect((await readIndex(w)).validators).toEqual(recorded)
  const d = watching!
  await w.setContent('news', { properties: { title: 'edited there' } })
  await d.waitForEvent({ event: 'pulled', path: 'content/news.json' })
})

test('media read in full and equal to the bases: no plan, and the media validator is recorded', async () => {
  world = await startWorld('spec', { content: ['home'], resources: ['schemas', 'media'] })
  const w = world
  await mkdir(w.file('media/img'), { recursive: true })
  await writeFile(w.file('media/img/one.png'), 'one')
  await writeFile(w.file('media/two.png'), 'two')
  for (let i = 0; i < 3; i++) expect((await w.cli('sync')).exitCode).toBe(0)
  const recorded = (await readIndex(w)).validators
  expect(recorded?.media).toBeDefined()
  await dropValidators(w, ['media'])
  const entries = await reconciled(w)
  expect(entries.find((entry) => entry.msg === SKIPPED)).toMatchObject({
    items: 3,
    notModified: 1,
    readInFull: ['media'],
  })
  expect((await readIndex(w)).validators).toEqual(recorded)
  // Media still sync: a new file is uploaded.
  await writeFile(w.file('media/three.png'), 'three')
  await watching!.waitForEvent({ event: 'pushed', path: 'media/three.png' })
})
