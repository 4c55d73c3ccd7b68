// A safety stop in watch names the commands that lift it, since watch takes no --allow-deletes:
// the stop carries the flag it names, and the daemon rewrites by that, never by the words.

import { expect, test } from 'vitest'
import { describeStop, type GuardStop, rerunFlag } from '../../src/engine/guards.js'
import { SafetyStopError } from '../../src/engine/plan-and-apply.js'
import { forWatch } from '../../src/watch/daemon-errors.js'

const stopOf = (stop: GuardStop) => new SafetyStopError(describeStop(stop), rerunFlag(stop))

test('a stop --allow-deletes lifts names the commands watch needs instead', () => {
  const said = forWatch(stopOf({ ok: false, reason: 'listing-emptied', kind: 'content', had: 12 }))
  expect(said).toContain(
    'stop `cms-sync watch` (Ctrl-C), run `cms-sync sync --allow-deletes` and start watch again',
  )
  expect(said).not.toContain('re-run with')
})

test('a stop no flag lifts, and any other error, is told as it is', () => {
  const orphans = stopOf({
    ok: false,
    reason: 'orphans',
    parents: [{ path: 'content/a.json', children: ['b'] }],
  })
  expect(orphans.rerunWith).toBeUndefined()
  expect(forWatch(orphans)).toBe(orphans.message)
  const plain = new Error('a server text that says: re-run with --allow-deletes')
  expect(forWatch(plain)).toBe(plain.message)
  expect(forWatch('a string')).toBe('a string')
})
