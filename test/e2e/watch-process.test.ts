// `cms-sync watch` as a real process: SIGTERM and SIGINT end it cleanly with exit 0, a second
// cms-sync on the workspace is refused with exit 5 naming the daemon, and after a kill -9 the
// next start recovers the lock and reconciles what changed meanwhile, pushing nothing else.

import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeAll, expect, test } from 'vitest'
import { ensureBuilt } from '../helpers/build.js'
import { runBuilt } from '../helpers/built-cli.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'
import { setWatchConfig, watchProcess } from '../helpers/watch.js'

let world: World | undefined
const daemons: Array<ReturnType<typeof watchProcess>> = []
beforeAll(ensureBuilt, 120_000)
afterEach(async () => {
  for (const d of daemons.splice(0)) if (d.child.exitCode === null) d.child.kill('SIGKILL')
  await world?.close()
  world = undefined
})

async function started(w: World) {
  const d = watchProcess(w.root, w.env)
  daemons.push(d)
  await d.waitForEvent({ event: 'ready' }, 15_000)
  return d
}

const lockDir = (w: World) => path.join(w.root, '.cms-sync', 'lock')

test.each(['SIGTERM', 'SIGINT'] as const)(
  '%s stops the daemon within seconds with exit 0, lock released',
  async (signal) => {
    world = await syncedWorld('spec')
    await setWatchConfig(world.root)
    const d = await started(world)
    await world.editJson('content/home.json', { properties: { title: 'before the stop' } })
    await d.waitForEvent({ event: 'pushed', path: 'content/home.json' })
    expect(existsSync(lockDir(world))).toBe(true)

    const sentAt = Date.now()
    d.child.kill(signal)
    expect(await d.exited).toEqual({ code: 0, signal: null })
    expect(Date.now() - sentAt).toBeLessThan(5_000)
    expect(d.events.at(-1)).toMatchObject({ event: 'stopped', pending: 0 })
    expect(existsSync(lockDir(world))).toBe(false)
    expect(await world.server.get('content', 'home')).toMatchObject({
      properties: { title: 'before the stop' },
    })
  },
)

test('a second daemon or a one-shot push exits 5 naming the running daemon', async () => {
  world = await syncedWorld('spec')
  await setWatchConfig(world.root)
  const first = await started(world)
  const pid = String(first.child.pid)

  const second = watchProcess(world.root, world.env)
  daemons.push(second)
  expect((await second.exited).code).toBe(5)
  expect(second.stderr()).toContain(`locked by \`cms-sync watch\` (pid ${pid}, since`)

  // The refusal says what to do: watch already does what push and sync would, or stop it first
  for (const command of ['push', 'sync']) {
    const run = await world.cli(command)
    expect(run.exitCode).toBe(5)
    expect(run.stderr).toContain(`\`cms-sync watch\` (pid ${pid}`)
    expect(run.stderr).toContain('which already pushes local edits and pulls server changes as they happen')
    expect(run.stderr).toContain(
      `to run \`cms-sync ${command}\` yourself, stop it first (Ctrl-C in its terminal, or \`kill ${pid}\`)`,
    )
  }
  const built = await runBuilt(['push'], { cwd: world.root, env: world.env })
  expect(built.code).toBe(5)
  expect(built.stderr).toContain('which already pushes local edits')
  // The first one is unharmed: it still pushes.
  await world.editJson('content/news.json', { properties: { title: 'still watching' } })
  await first.waitForEvent({ event: 'pushed', path: 'content/news.json' })
})

test('after a kill -9 the next start takes over the lock and reconciles only what changed', async () => {
  world = await syncedWorld('spec')
  await setWatchConfig(world.root)
  const killed = await started(world)
  killed.child.kill('SIGKILL')
  await killed.exited
  expect(existsSync(lockDir(world))).toBe(true) // left behind

  // While no daemon runs: one local edit, one remote edit.
  await world.editJson('content/home.json', { properties: { title: 'edited while down' } })
  await world.setContent('news', { properties: { title: 'remote while down' } })

  const restarted = await started(world)
  await restarted.waitForEvent({ event: 'pushed', path: 'content/home.json' })
  await restarted.waitForEvent({ event: 'pulled', path: 'content/news.json' })
  expect(restarted.events.filter((e) => e.event === 'pushed' || e.event === 'pulled')).toHaveLength(2)
  expect(await world.server.get('content', 'home')).toMatchObject({
    properties: { title: 'edited while down' },
  })
  expect(await world.readJson('content/news.json')).toMatchObject({
    properties: { title: 'remote while down' },
  })
  restarted.child.kill('SIGTERM')
  expect((await restarted.exited).code).toBe(0)
})

test('Ctrl-C while watch is still starting (its modules loading, the first reconcile) exits 0, never 130', async () => {
  world = await syncedWorld('spec')
  await setWatchConfig(world.root)
  // How long a start takes here, then signals spread over it: each lands in a different phase.
  const probe = watchProcess(world.root, world.env)
  daemons.push(probe)
  const startedAt = Date.now()
  await probe.waitForEvent({ event: 'ready' }, 15_000)
  const startMs = Date.now() - startedAt
  probe.child.kill('SIGINT')
  expect((await probe.exited).code).toBe(0)
  for (const share of [0.4, 0.55, 0.7, 0.85]) {
    const d = watchProcess(world.root, world.env)
    daemons.push(d)
    // The wait is the scenario: the signal lands at this share of a start, in whatever phase
    // that is (no event marks a phase before 'ready', and one would change when it lands).
    await new Promise((resolve) => setTimeout(resolve, startMs * share))
    d.child.kill('SIGINT')
    const exit = await d.exited
    // Before Node runs our first line, its default ends the process by the signal itself.
    if (exit.signal === 'SIGINT') expect(d.events).toEqual([])
    else expect({ share, ...exit }).toEqual({ share, code: 0, signal: null })
  }
})
