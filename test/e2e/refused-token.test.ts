// A token the server refuses (expired, revoked, mistyped). The upstream server answers reads
// without one and accepts schema, form and media writes anonymously, so only the token check
// keeps a run from writing half its plan: status says the token is refused (exit 2) and push
// writes nothing at all.

import { afterEach, describe, expect, test } from 'vitest'
import { syncedWorld, type World } from '../helpers/sync-world.js'

const BAD = 'f'.repeat(40)
/** What either dialect says about the token, with the way out. */
const REFUSED = /(refused the token|token .* is not valid).*cms-sync login/

describe.each(['spec', 'upstream'] as const)('a refused token (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  async function editedBothKinds(): Promise<World> {
    world = await syncedWorld(dialect)
    await world.editJson('schemas/section.json', { name: 'Section (edited)' })
    await world.editJson('content/home.json', { properties: { title: 'Edited home' } })
    world.extraEnv.CMS_SYNC_TOKEN = BAD
    return world
  }

  test('push writes nothing, not even the schemas the server would take without a token', async () => {
    const w = await editedBothKinds()
    const before = await w.serverState()
    const push = await w.cli('push')
    expect(push.exitCode).toBe(2)
    expect(push.stderr).toMatch(REFUSED)
    // Spec refuses the first listing already; upstream lists anonymously, so the check says it.
    // The stop tells the refusal in the words that name where the token came from, after its own.
    if (dialect === 'upstream')
      expect(push.stderr).toMatch(
        /nothing was sent to the server: the server \S+ refused the token in CMS_SYNC_TOKEN/,
      )
    expect(await w.serverState()).toEqual(before)
    // With a good token the same push goes through.
    delete w.extraEnv.CMS_SYNC_TOKEN
    expect((await w.cli('push')).exitCode).toBe(0)
    expect((await w.server.get('schema', 'section'))?.name).toBe('Section (edited)')
  })

  test('status says the token is refused and exits 2', async () => {
    const w = await editedBothKinds()
    const status = await w.cli('status')
    expect(status.exitCode).toBe(2)
    expect(status.stderr).toMatch(REFUSED)
    expect(status.stdout).not.toMatch(/^clean/m)
    const json = await w.cli('--json', 'status')
    expect(json.exitCode).toBe(2)
    if (dialect === 'upstream') {
      // The drift is still shown (reads work), with the token's refusal beside it.
      expect(json.json.changes).toHaveLength(2)
      expect(json.json.token.refused).toMatch(REFUSED)
      // The client's own step is dropped (by the error's hint), the status's own follows once.
      expect(json.json.token.refused).toMatch(
        /\): reads work, but a push or sync would be refused; run `cms-sync login`/,
      )
      expect(json.json.token.refused.match(/cms-sync login/g)).toHaveLength(1)
    } else expect(json.stderr).toMatch(REFUSED)
  })

  test('a run that only pulls still works on a server that reads without a token', async () => {
    const w = await editedBothKinds()
    await w.setContent('news', { properties: { title: 'News from the server' } })
    const pull = await w.cli('pull', 'content/news.json')
    // Spec refuses the anonymous listing; upstream reads it, and a pull writes only files.
    expect(pull.exitCode).toBe(dialect === 'spec' ? 2 : 0)
  })
})
