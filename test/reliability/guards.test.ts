// Guards: a failed, cut-short or empty listing deletes nothing; deleting most of a kind on
// either side stops; a workspace bound to another server, project or environment refuses.
// Each refused run must exit 4 and leave files, state and server exactly as they were.

import { readFile, rm, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { startWorld, type World } from '../helpers/sync-world.js'
import { filesUnder, report } from './support.js'

describe.each(['spec', 'upstream'] as const)('guards (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  async function snapshot(w: World) {
    return { files: await filesUnder(w.root), server: await w.serverState() }
  }

  test('listings that fail, shrink or come back empty, deletes of most of a kind, and another target all stop with nothing changed', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `page-${i}`)
    world = await startWorld(dialect, { content: ids })
    expect((await world.cli('sync')).exitCode).toBe(0)
    const w = world
    const stops: Record<string, number> = {}
    // design.md: a failed listing (a 403 included) is a safety stop (exit 4); a refused token
    // (401) is the user's configuration to fix by logging in (exit 2). Neither changes anything.
    const expectStop = async (what: string, args: string[], pattern: RegExp) => {
      const before = await snapshot(w)
      const run = await w.cli(...args)
      expect(run.exitCode, `${what}: ${run.stderr}`).toBe(what.includes('401') ? 2 : 4)
      expect(run.stderr, what).toMatch(pattern)
      const after = await snapshot(w)
      expect(after.server, what).toEqual(before.server)
      expect(after.files, what).toEqual(before.files)
      stops[what] = run.exitCode
    }
    const listing = (body: (all: unknown[]) => { status: number; body: string }) => {
      let all: unknown[] = []
      return async () => {
        all = await w.server.list('content')
        w.proxy.override = (method, route) =>
          method === 'GET' && /\/content$/.test(route) ? body(all) : undefined
      }
    }
    const cases: [string, () => Promise<void>, RegExp][] = [
      ['failed listing (500)', listing(() => ({ status: 500, body: 'boom' })), /listing/],
      [
        'failed listing (403)',
        listing(() => ({ status: 403, body: 'no' })),
        /safety stop.*403.*lacks the rights/,
      ],
      ['refused token (401)', listing(() => ({ status: 401, body: 'Not logged in' })), /401.*cms-sync login/],
      ['empty listing', listing(() => ({ status: 200, body: '[]' })), /listed no content/],
      [
        'listing cut to one item',
        listing((all) => ({ status: 200, body: JSON.stringify(all.slice(0, 1)) })),
        /delete 9 of 10/,
      ],
      [
        'listing cut mid-JSON',
        listing((all) => ({ status: 200, body: JSON.stringify(all).slice(0, 200) })),
        /listing/,
      ],
    ]
    for (const [what, arrange, pattern] of cases) {
      await arrange()
      await expectStop(what, ['sync'], pattern)
      await expectStop(`${what} (pull)`, ['pull'], pattern)
      w.proxy.override = undefined
    }
    // Most local files deleted (a bad checkout): the push stops.
    const saved = new Map<string, string>()
    for (const id of ids.slice(0, 7)) {
      saved.set(id, await readFile(w.file(`content/${id}.json`), 'utf8'))
      await rm(w.file(`content/${id}.json`))
    }
    await expectStop('7 of 10 files deleted locally', ['push'], /delete 7 of 10/)
    for (const [id, text] of saved) await writeFile(w.file(`content/${id}.json`), text)
    // Bound to another target
    const config = await readFile(w.file('cms-sync.yaml'), 'utf8')
    for (const [what, changed] of [
      ['another project', config.replace('project: demo', 'project: other')],
      ['another environment', config.replace('environment: live', 'environment: stage')],
      ['another server', config.replace(w.proxy.url, w.emulator.url)],
    ] as const) {
      await writeFile(w.file('cms-sync.yaml'), changed)
      await expectStop(what, ['sync'], /bound to/)
    }
    await writeFile(w.file('cms-sync.yaml'), config)
    const after = await w.cli('--json', 'sync')
    expect(after.json).toEqual({ applied: [], conflicts: [], failed: [] })
    report(`guards/${dialect}`, { stopsTried: Object.keys(stops).length, itemsChanged: 0 })
  })
})
