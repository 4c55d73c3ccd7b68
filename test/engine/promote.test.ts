// promote's rules without a server: which items are refused and why, and that a push the server
// answered but did not carry out (upstream answers 200 with sync off) is reported as failed.

import { describe, expect, it } from 'vitest'
import type { PlanItem } from '../../src/engine/plan.js'
import type { PlannedRun } from '../../src/engine/plan-apply-types.js'
import { type PromotePort, promote, promoteSelection, refusal } from '../../src/engine/promote.js'

const item = (id: string, extra: Partial<PlanItem> = {}): PlanItem => ({
  kind: 'content',
  id,
  path: `content/${id}.json`,
  local: 'unchanged',
  remote: 'unchanged',
  action: 'none',
  ...extra,
})

/** A parent that records pushes and lists as present only what `lands` lets through. */
function port(lands: (id: string) => boolean) {
  const pushed: string[] = []
  const p: PromotePort = {
    async pushToParent(_kind, id) {
      pushed.push(id)
    },
    async list() {
      return pushed.map((id) => ({ id, sync: { isRemote: false, hasRemote: lands(id) } }))
    },
  }
  return { p, pushed }
}

describe('promote', () => {
  it('an owed publish is this project’s deployment, not an item to send up', () => {
    const synced = item('a')
    const owed = item('a', { action: 'publish', publishing: { connection: 'site' } })
    const run = { plan: { items: [synced, owed] } } as unknown as PlannedRun
    expect(promoteSelection(run, ['content/a.json'])).toEqual([synced])
  })

  it('refuses unsynced, conflicting, inherited and media items with a reason', () => {
    expect(refusal(item('a'))).toBeUndefined()
    expect(refusal(item('a', { action: 'merge-base' }))).toBeUndefined()
    expect(refusal(item('a', { action: 'push', local: 'modified' }))).toMatch(
      /unsynced changes \(local modified/,
    )
    expect(refusal(item('a', { action: 'pull', remote: 'modified' }))).toMatch(/unsynced changes/)
    expect(refusal(item('a', { action: 'conflict' }))).toMatch(/resolve/)
    expect(refusal(item('a', { inherited: true }))).toMatch(/already inherited/)
    expect(refusal(item('m', { kind: 'media', path: 'media/m.png' }))).toMatch(/media/)
  })

  it('pushes only what may go, and fails an item the parent does not list afterwards', async () => {
    const { p, pushed } = port((id) => id !== 'ghost')
    const outcome = await promote(p, [item('ok'), item('ghost'), item('dirty', { action: 'push' })], {
      dryRun: false,
    })
    expect(pushed.sort()).toEqual(['ghost', 'ok'])
    expect(outcome.applied.map((i) => i.id)).toEqual(['ok'])
    expect(outcome.failed.map((i) => [i.id, i.error?.slice(0, 30)])).toEqual([
      ['dirty', 'has unsynced changes (local un'],
      ['ghost', 'the server accepted the push, '],
    ])
  })

  it('a dry run or a project without a parent pushes nothing', async () => {
    const dry = port(() => true)
    expect((await promote(dry.p, [item('ok')], { dryRun: true })).applied).toHaveLength(1)
    expect(dry.pushed).toEqual([])
    const orphan = port(() => true)
    const outcome = await promote(orphan.p, [item('ok')], { dryRun: false, noParent: 'no parent' })
    expect(outcome.failed).toEqual([expect.objectContaining({ id: 'ok', error: 'no parent' })])
    expect(orphan.pushed).toEqual([])
  })
})
