// Faults: a long editing session on both sides against an emulator that injects 5xx, dropped
// connections (before and after acting), slow answers and 429 at realistic rates, and enforces
// the configured request rate. Everything must converge with nothing lost or duplicated, and
// the emulator must never have had to refuse a request for going over the limit.

import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { type CliRun, startWorld, type World } from '../helpers/sync-world.js'
import { SECRET, SESSION_ENV, Session } from './session.js'
import { report, SEED, scaled, secretsIn } from './support.js'

const RATE = 25
const FAULTS = 'error=0.04,drop=0.02,drop-after=0.02,slow=0.03:300,429=0.03'

describe.each(['spec', 'upstream'] as const)('faults (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test('a long session under injected faults converges with nothing lost, duplicated or over the rate limit', async () => {
    world = await startWorld(dialect, { content: [] })
    Object.assign(world.extraEnv, SESSION_ENV)
    const session = new Session(world, SEED, dialect)
    await session.seed(24)
    await writeFile(
      path.join(world.root, 'cms-sync.yaml'),
      [
        `server: ${world.proxy.url}`,
        'project: demo',
        'environment: live',
        'resources: [schemas, content, media, forms, connections]',
        `rateLimit: { requestsPerSecond: ${RATE}, concurrency: 4 }`,
        `dialect: ${dialect}`,
        '',
      ].join('\n'),
    )
    expect((await world.cli('sync')).exitCode).toBe(0)
    const rounds = scaled(8, 40)
    const perRound = scaled(12, 15)
    let runs = 0
    let failedRuns = 0
    const gaveUpOn: string[] = []
    const exitCodes: Record<number, number> = {}
    for (let r = 0; r < rounds; r++) {
      // The other client edits with the faults off: only cms-sync's requests are under test.
      world.emulator.setFaults({})
      world.emulator.setRateLimit(undefined)
      await session.round(perRound)
      world.emulator.setFaults(FAULTS, SEED + r)
      world.emulator.setRateLimit(RATE)
      // A run may give up on an item after its retries (exit 1); the next run picks it up.
      let last: CliRun | undefined
      for (let attempt = 0; attempt < 6; attempt++) {
        last = await world.cli('sync')
        runs++
        exitCodes[last.exitCode] = (exitCodes[last.exitCode] ?? 0) + 1
        if (last.exitCode === 0) break
        failedRuns++
        // What it gave up on, for the report: each failed item's line and the error under it.
        const lines = `${last.stdout}\n${last.stderr}`.split('\n')
        lines.forEach((line, n) => {
          if (/^\s*failed /.test(line)) gaveUpOn.push(`${line.trim()}: ${lines[n + 1]?.trim() ?? ''}`)
        })
        // Only transient failures are acceptable: never a conflict or a safety stop.
        expect([1], last.stderr).toContain(last.exitCode)
      }
      expect(last?.exitCode, last?.stderr).toBe(0)
    }
    const injected = { ...world.emulator.faults.counts }
    world.emulator.setFaults({})
    world.emulator.setRateLimit(undefined)
    const clean = await world.cli('--json', 'sync')
    expect(clean.exitCode).toBe(0)
    expect(clean.json).toEqual({ applied: [], conflicts: [], failed: [] })
    const { lost, extra } = await session.expectConverged()
    // Under faults too: the connection secret and the token are in no workspace file.
    expect(await secretsIn(world.root, [SECRET, world.emulator.token()])).toEqual([])
    // The emulator counts a request over the configured rate as 'rate-limit': there must be none.
    expect(injected['rate-limit']).toBe(0)
    const faults = injected.error + injected.drop + injected['drop-after'] + injected.slow + injected['429']
    expect(faults).toBeGreaterThan(scaled(5, 60))
    report(`faults/${dialect}`, {
      edits: session.counts.edits,
      editsByKind: session.counts.byKind,
      syncRuns: runs,
      runsThatGaveUpOnAnItem: failedRuns,
      gaveUpOn,
      exitCodes,
      requestsByCmsSync: world.proxy.seen.length,
      requestsAtEmulator: injected.requests,
      faultsInjected: {
        error5xx: injected.error,
        dropBeforeAnswer: injected.drop,
        dropAfterActing: injected['drop-after'],
        slow: injected.slow,
        '429': injected['429'],
      },
      overRateLimit: injected['rate-limit'],
      itemsLost: lost,
      itemsDuplicated: extra,
    })
  })
})
