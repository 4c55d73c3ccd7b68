// What the daemon tells its user: each pushed or pulled file, and open conflicts and failures
// once when they appear rather than on every poll; how each event reads on a terminal.

import { PassThrough } from 'node:stream'
import { expect, test } from 'vitest'
import { eventLine, watchPrinter } from '../../src/cli/watch-output.js'
import type { ItemReport, Outcome } from '../../src/engine/outcome.js'
import { createOutcomeReporter, type WatchEvent } from '../../src/watch/watch-events.js'

function item(path: string, action: ItemReport['action'], extra: Partial<ItemReport> = {}): ItemReport {
  return { kind: 'content', id: path, path, local: 'modified', remote: 'unchanged', action, ...extra }
}
const outcome = (o: Partial<Outcome>): Outcome => ({ applied: [], conflicts: [], failed: [], ...o })

test('an open conflict is told once across polls, and again after it was settled and came back', () => {
  const events: WatchEvent[] = []
  const reporter = createOutcomeReporter((e) => events.push(e))
  const open = outcome({ conflicts: [item('content/a.json', 'conflict')] })
  reporter.outcome(open, true)
  reporter.outcome(open, true)
  reporter.outcome(outcome({}), true) // settled (resolve, or both sides made equal)
  reporter.outcome(open, false)
  expect(events).toEqual([
    { event: 'conflict', path: 'content/a.json' },
    { event: 'conflict', path: 'content/a.json' },
  ])
})

test('pushes and pulls are told each time; a failure again only when its error changes', () => {
  const events: WatchEvent[] = []
  const reporter = createOutcomeReporter((e) => events.push(e))
  reporter.outcome(
    outcome({ applied: [item('content/a.json', 'push'), item('content/b.json', 'delete-local')] }),
    false,
  )
  const failed = outcome({ failed: [item('content/c.json', 'push', { error: 'rejected: bad field' })] })
  reporter.outcome(failed, false)
  reporter.outcome(failed, true)
  reporter.outcome(outcome({ failed: [item('content/c.json', 'push', { error: 'another problem' })] }), true)
  reporter.error('safety stop: the listing was empty')
  reporter.error('safety stop: the listing was empty')
  expect(events.map((e) => e.event)).toEqual(['pushed', 'pulled', 'failed', 'failed', 'error'])
  expect(events[1]).toEqual({ event: 'pulled', path: 'content/b.json', action: 'delete-local' })
})

test('terminal lines say what happened; --json prints one object per line; -q only problems', () => {
  expect(eventLine({ event: 'pushed', path: 'content/home.json', action: 'push' })).toContain(
    '↑ pushed content/home.json',
  )
  expect(
    eventLine({ event: 'paused', reason: 'mass-change', count: 812, since: '', samplePaths: [] }),
  ).toContain(
    '⏸ paused: 812 files changed at once; remote changes are still pulled; to push them, stop `cms-sync watch` (Ctrl-C), run `cms-sync push` (which lifts the pause) and start watch again; to drop them instead, `cms-sync restore <paths>`',
  )

  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const io = { stdout, stderr, env: {}, cwd: '/', stopSignal: new Promise<void>(() => {}) }
  const at = () => new Date('2026-01-02T03:04:05.000Z')
  watchPrinter(
    io,
    { json: true, progress: false },
    at,
  )({ event: 'pulled', path: 'content/a.json', action: 'pull' })
  expect(JSON.parse(String(stdout.read()))).toEqual({
    time: '2026-01-02T03:04:05.000Z',
    event: 'pulled',
    path: 'content/a.json',
    action: 'pull',
  })
  const quiet = watchPrinter(io, { quiet: true, progress: false }, at)
  quiet({ event: 'pushed', path: 'content/a.json', action: 'push' })
  quiet({ event: 'failed', path: 'content/b.json', action: 'push', error: 'rejected' })
  expect(stdout.read()).toBeNull()
  expect(String(stderr.read())).toContain('push failed content/b.json: rejected')
})

test("a delete on the server names where the server's copy was kept", () => {
  const events: WatchEvent[] = []
  const reporter = createOutcomeReporter((e) => events.push(e))
  const kept = '.cms-sync/trash/2026-11-27T10-00-00-000Z/content/a.json.remote'
  reporter.outcome(outcome({ applied: [item('content/a.json', 'delete-remote', { kept })] }), false)
  expect(events).toEqual([{ event: 'pushed', path: 'content/a.json', action: 'delete-remote', kept }])
  expect(eventLine(events[0]!)).toContain(
    `deleted on the server content/a.json (its server copy is kept in ${kept})`,
  )
})

test('what is held is told when it changes, again at a calm interval while it stands, and once when it is gone', () => {
  const events: WatchEvent[] = []
  let clock = Date.parse('2026-11-27T10:00:00Z')
  const reporter = createOutcomeReporter((e) => events.push(e), { reminderMs: 300_000, now: () => clock })
  const held = {
    guard: 'max-delete' as const,
    side: 'remote' as const,
    kind: 'content' as const,
    action: 'delete-local' as const,
    paths: ['content/a.json', 'content/b.json'],
    count: 2,
    reason: '2 content items deleted on the server',
    release: 'cms-sync resolve --keep remote content/a.json content/b.json',
    drop: 'cms-sync resolve --keep local content/a.json content/b.json',
  }
  reporter.outcome(outcome({ held: [held] }), true)
  clock += 10_000
  reporter.outcome(outcome({ held: [held] }), true) // the next poll holds the same: not told again
  reporter.remind() // a quiet poll
  expect(events).toEqual([{ event: 'held', held: [{ ...held, since: '2026-11-27T10:00:00.000Z' }] }])
  clock += 300_000
  reporter.remind()
  expect(events).toHaveLength(2)
  expect(events[1]).toEqual(events[0])
  // A resolve carried one of them out (a partial run): the other is still held.
  reporter.outcome(outcome({ applied: [item('content/a.json', 'delete-local')] }), false)
  expect(events.at(-1)).toMatchObject({ event: 'held', held: [{ paths: ['content/b.json'], count: 1 }] })
  reporter.outcome(outcome({}), true)
  expect(events.at(-1)).toEqual({ event: 'held', held: [] })
  clock += 600_000
  reporter.remind()
  expect(events.filter((e) => e.event === 'held')).toHaveLength(4)
})
