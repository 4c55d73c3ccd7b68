// What a quiet daemon leaves alone between its polls (docs/watch.md: an idle daemon
// costs what a bare poller costs). Each poll is known by the daemon's own `polled` event.

import { stat } from 'node:fs/promises'
import { afterEach, expect, test } from 'vitest'
import { syncedWorld } from '../helpers/sync-world.js'
import { watchReconciled } from '../helpers/watch.js'
import { waitFor } from '../watch/helpers.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

test('a quiet daemon does not touch its workspace lock on every poll', async () => {
  const w = await syncedWorld('spec')
  cleanups.push(() => w.close())
  const daemon = await watchReconciled(w, cleanups, 1)
  const lock = w.file('.cms-sync/lock')
  const before = (await stat(lock)).mtimeMs
  const polls = () => daemon.events.filter((e) => e.event === 'polled' && e.planned === 'nothing').length
  const quiet = polls()
  // Seven quiet polls a second apart: longer than any heartbeat that beats on the poll's scale.
  await waitFor(() => polls() >= quiet + 7, { timeoutMs: 20_000, what: 'seven quiet polls' })
  expect((await stat(lock)).mtimeMs).toBe(before)
})
