// Ctrl-C during a pull or push: the run stops between items and gives an account, in a pipe as
// on a terminal: what was applied, what is left, and the command that finishes it; the log ends
// with the same line; exit 130; nothing of the run is left in .cms-sync/tmp/. The built CLI runs
// as a process behind the counting proxy, and SIGINT goes once the server has seen the Nth write.

import { readdir, readFile, writeFile } from 'node:fs/promises'
import { afterEach, beforeAll, describe, expect, test } from 'vitest'
import { ensureBuilt } from '../helpers/build.js'
import { runBuiltInTty, startBuilt } from '../helpers/built-cli.js'
import { contentFile } from '../helpers/fixtures.js'
import { startWorld, type World } from '../helpers/sync-world.js'
import { serverTitle } from '../helpers/watch.js'
import { waitFor } from '../watch/helpers.js'

const IDS = Array.from({ length: 25 }, (_, i) => `page-${String(i).padStart(2, '0')}`)
let world: World | undefined
beforeAll(ensureBuilt, 120_000)
afterEach(async () => {
  await world?.close()
  world = undefined
})

/** `cms-sync <args>` with stdout and stderr on pipes; SIGINT once `when()` holds. */
async function interrupted(w: World, args: string[], when: () => boolean) {
  const { child, done } = startBuilt(['-C', w.root, ...args], { cwd: w.root, env: w.env, timeoutMs: 60_000 })
  await waitFor(when, { timeoutMs: 15_000, what: 'the Nth request' })
  child.kill('SIGINT')
  return done
}

/** A synced world of IDS, each page edited here, pushed at `requestsPerSecond` one at a time. */
async function editedLocally(dialect: 'spec' | 'upstream', requestsPerSecond: number): Promise<World> {
  const w = await startWorld(dialect, { content: IDS })
  world = w
  expect((await w.cli('sync')).exitCode).toBe(0)
  for (const id of IDS)
    await w.writeJson(`content/${id}.json`, contentFile(id, { properties: { title: `${id}!` } }))
  const config = await readFile(w.file('cms-sync.yaml'), 'utf8')
  await writeFile(
    w.file('cms-sync.yaml'),
    config.replace(
      /^rateLimit:.*$/m,
      `rateLimit: { requestsPerSecond: ${requestsPerSecond}, concurrency: 1 }`,
    ),
  )
  return w
}

const writes = (w: World) => w.proxy.seen.filter((line) => !line.startsWith('GET ')).length

describe.each(['spec', 'upstream'] as const)('Ctrl-C in a pipe (%s dialect)', (dialect) => {
  test('push stops between items: an account on stderr and in the log, exit 130, then push finishes', async () => {
    // Slow enough that the signal lands in the middle: 8 requests a second, one at a time.
    const w = await editedLocally(dialect, 8)
    w.proxy.seen.length = 0
    const run = await interrupted(w, ['push'], () => writes(w) >= 5)

    expect(run.code).toBe(130)
    const account = /interrupted: (\d+) applied, (\d+) left; run `cms-sync push` again/.exec(run.stderr)
    expect(account, run.stderr).not.toBeNull()
    const [applied, left] = [Number(account![1]), Number(account![2])]
    expect(applied).toBeGreaterThanOrEqual(4)
    expect(applied + left).toBe(IDS.length)
    expect(left).toBeGreaterThan(0)
    // Each applied item is a line on stdout, as after a whole run.
    expect(run.stdout.match(/^ +push +content\//gm)).toHaveLength(applied)
    // The server holds exactly what was reported.
    let onServer = 0
    for (const id of IDS) if ((await serverTitle(w.server, id)) === `${id}!`) onServer++
    expect(onServer).toBe(applied)
    // The log says so too, and ends the command line.
    const log = await readFile(w.file('.cms-sync/logs/cms-sync.log'), 'utf8')
    expect(log).toMatch(/interrupted: \d+ applied, \d+ left/)
    expect(log.trim().split('\n').at(-1)).toMatch(/"exitCode":130/)
    expect(await readdir(w.file('.cms-sync/tmp')).catch(() => [])).toEqual([])

    const again = await w.cli('--json', 'push')
    expect(again.exitCode).toBe(0)
    expect(again.json.applied).toHaveLength(left)
  })

  test('Ctrl-C while the last item is in flight: the run is whole, told as one, exit 0 (never "0 left; run again")', async () => {
    const w = await editedLocally(dialect, 50)
    w.proxy.seen.length = 0
    // The signal lands once the server has seen the last write: that item finishes, none is left
    const run = await interrupted(w, ['push'], () => writes(w) >= IDS.length)
    expect(run.stderr).not.toMatch(/0 left/)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/push: applied 25, 0 conflicts, 0 failed/)
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])
  })

  test('pull stopped while the listing is read: nothing applied, said so, exit 130', async () => {
    const w = await startWorld(dialect, { content: IDS })
    world = w
    expect((await w.cli('sync')).exitCode).toBe(0)
    for (const id of IDS) await w.setContent(id, { properties: { title: `${id} on the server` } })
    const before = await w.tree()
    // The server answers the listings, but the answers never reach the client.
    w.proxy.hold = (method) => method === 'GET'
    const run = await interrupted(w, ['pull'], () => w.proxy.held.length >= 1)
    expect(run.code).toBe(130)
    expect(run.stderr).toMatch(/interrupted before anything was applied; run `cms-sync pull` again/)
    expect(await w.tree()).toEqual(before)
    const log = await readFile(w.file('.cms-sync/logs/cms-sync.log'), 'utf8')
    expect(log.trim().split('\n').at(-1)).toMatch(/"exitCode":130/)
  })
})

test('on a terminal, Ctrl-C clears the progress line before the account', async () => {
  const w = await editedLocally('spec', 8)
  // Ctrl-C typed once the progress line shows the third item.
  const run = await runBuiltInTty(['-C', w.root, 'push'], {
    cwd: w.root,
    env: w.env,
    input: '\x03',
    waitFor: '[3/',
  })
  expect(run.code).toBe(130)
  const lines = run.output.split('\n')
  const account = lines.find((line) => line.includes('interrupted:'))!
  expect(account).toMatch(/\x1b\[2Kcms-sync: interrupted: \d+ applied, \d+ left; run `cms-sync push` again$/)
  expect(account.slice(account.lastIndexOf('\x1b[2K') + 4)).not.toContain('[')
})
