// One scenario per row of the README's "How sync decides" table, against the real emulator in
// both dialects: Given a synced workspace, When each side changes (or not), Then status shows
// the row's action and sync carries it out (or keeps the conflict and loses nothing).

import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { contentFile, contentOf } from '../helpers/fixtures.js'
import { startWorld, type World } from '../helpers/sync-world.js'

type Step = (w: World) => Promise<void>
const noop: Step = async () => {}
const editLocal =
  (title: string, rel = 'content/news.json'): Step =>
  (w) =>
    w.editJson(rel, { properties: { title } })
const editRemote =
  (title: string, id = 'news'): Step =>
  (w) =>
    w.setContent(id, { properties: { title } })
const deleteLocal: Step = (w) => w.remove('content/news.json')
const deleteRemote: Step = (w) => w.server.remove('content', 'news')
const addLocal =
  (title = 'fresh'): Step =>
  (w) =>
    w.writeJson('content/fresh.json', contentFile('fresh', { properties: { title } }))
const addRemote =
  (title = 'fresh'): Step =>
  async (w) => {
    await w.server.put('content', 'fresh', contentOf('fresh', { properties: { title } }))
  }

interface Row {
  name: string
  local: Step
  remote: Step
  status: { local: string; remote: string; action: string } | 'clean'
  exitCode: number
  verify: (w: World) => Promise<void>
}

const title = async (w: World, rel = 'content/news.json') =>
  ((await w.readJson(rel)).properties as { title: string }).title
const serverTitle = async (w: World, id = 'news') =>
  ((await w.server.get('content', id))?.properties as { title: string } | undefined)?.title

const ROWS: Row[] = [
  {
    name: 'unchanged on both sides: nothing to do',
    local: noop,
    remote: noop,
    status: 'clean',
    exitCode: 0,
    verify: async (w) => expect(await title(w)).toBe('news'),
  },
  {
    name: 'edited locally: pushed',
    local: editLocal('local'),
    remote: noop,
    status: { local: 'modified', remote: 'unchanged', action: 'push' },
    exitCode: 0,
    verify: async (w) => expect(await serverTitle(w)).toBe('local'),
  },
  {
    name: 'edited on the server: pulled',
    local: noop,
    remote: editRemote('remote'),
    status: { local: 'unchanged', remote: 'modified', action: 'pull' },
    exitCode: 0,
    verify: async (w) => expect(await title(w)).toBe('remote'),
  },
  {
    name: 'edited differently on both sides: conflict, both kept',
    local: editLocal('local'),
    remote: editRemote('remote'),
    status: { local: 'modified', remote: 'modified', action: 'conflict' },
    exitCode: 3,
    verify: async (w) => {
      expect(await title(w)).toBe('local')
      expect(await serverTitle(w)).toBe('remote')
      expect(await title(w, '.cms-sync/conflicts/content/news.json.remote')).toBe('remote')
    },
  },
  {
    name: 'edited the same way on both sides: agreed silently',
    local: editLocal('same'),
    remote: editRemote('same'),
    status: 'clean',
    exitCode: 0,
    verify: async (w) => expect((await w.cli('--json', 'status')).json.clean).toBe(true),
  },
  {
    name: 'deleted on the server, unchanged locally: deleted locally, kept in trash',
    local: noop,
    remote: deleteRemote,
    status: { local: 'unchanged', remote: 'deleted', action: 'delete-local' },
    exitCode: 0,
    verify: async (w) => {
      expect(await w.exists('content/news.json')).toBe(false)
    },
  },
  {
    name: 'deleted on the server, edited locally: conflict, the edit stays',
    local: editLocal('local'),
    remote: deleteRemote,
    status: { local: 'modified', remote: 'deleted', action: 'conflict' },
    exitCode: 3,
    verify: async (w) => {
      expect(await title(w)).toBe('local')
      expect(await w.server.get('content', 'news')).toBeUndefined()
    },
  },
  {
    name: 'deleted locally, unchanged on the server: deleted on the server',
    local: deleteLocal,
    remote: noop,
    status: { local: 'deleted', remote: 'unchanged', action: 'delete-remote' },
    exitCode: 0,
    verify: async (w) => expect(await w.server.get('content', 'news')).toBeUndefined(),
  },
  {
    name: 'deleted locally, edited on the server: conflict, the server edit stays',
    local: deleteLocal,
    remote: editRemote('remote'),
    status: { local: 'deleted', remote: 'modified', action: 'conflict' },
    exitCode: 3,
    verify: async (w) => {
      expect(await serverTitle(w)).toBe('remote')
      expect(await w.exists('content/news.json')).toBe(false)
    },
  },
  {
    name: 'deleted on both sides: forgotten silently',
    local: deleteLocal,
    remote: deleteRemote,
    status: 'clean',
    exitCode: 0,
    verify: async (w) => expect((await w.cli('--json', 'status')).json.clean).toBe(true),
  },
  {
    name: 'added locally: created on the server',
    local: addLocal(),
    remote: noop,
    status: { local: 'added', remote: 'unchanged', action: 'push' },
    exitCode: 0,
    verify: async (w) => expect(await serverTitle(w, 'fresh')).toBe('fresh'),
  },
  {
    name: 'added on the server: created locally',
    local: noop,
    remote: addRemote(),
    status: { local: 'unchanged', remote: 'added', action: 'pull' },
    exitCode: 0,
    verify: async (w) => expect(await title(w, 'content/fresh.json')).toBe('fresh'),
  },
  {
    name: 'added on both sides, equal: adopted silently',
    local: addLocal(),
    remote: addRemote(),
    status: 'clean',
    exitCode: 0,
    verify: async (w) => expect((await w.cli('--json', 'status')).json.clean).toBe(true),
  },
  {
    name: 'added on both sides, different: conflict',
    local: addLocal('mine'),
    remote: addRemote('theirs'),
    status: { local: 'added', remote: 'added', action: 'conflict' },
    exitCode: 3,
    verify: async (w) => {
      expect(await title(w, 'content/fresh.json')).toBe('mine')
      expect(await serverTitle(w, 'fresh')).toBe('theirs')
    },
  },
]

describe.each(['spec', 'upstream'] as const)('how sync decides (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test.each(ROWS)('$name', async (row) => {
    // Given a workspace synced with the server
    world = await startWorld(dialect)
    expect((await world.cli('sync')).exitCode).toBe(0)
    // When each side changes
    await row.local(world)
    await row.remote(world)
    // Then status shows the row, and sync does what it says
    const status = await world.cli('--json', 'status')
    // status exits 3 while a conflict remains (design.md), as the sync will
    expect(status.exitCode).toBe(row.status !== 'clean' && row.status.action === 'conflict' ? 3 : 0)
    if (row.status === 'clean') expect(status.json.changes).toEqual([])
    else expect(status.json.changes).toEqual([expect.objectContaining({ kind: 'content', ...row.status })])
    const sync = await world.cli('--json', 'sync')
    expect(sync.stderr).toBe('')
    expect(sync.exitCode).toBe(row.exitCode)
    await row.verify(world)
    if (row.exitCode === 0) expect((await world.cli('--json', 'status')).json.clean).toBe(true)
  })
})

// Each conflict row settled both ways with --prefer: the winner is on both sides afterwards, the
// loser is in trash, and the workspace is clean.
type PreferRow = [
  name: string,
  local: Step,
  remote: Step,
  prefer: 'local' | 'remote',
  winner: string | 'gone',
]
const PREFER_ROWS: PreferRow[] = [
  ['both edited, local wins', editLocal('local'), editRemote('remote'), 'local', 'local'],
  ['both edited, remote wins', editLocal('local'), editRemote('remote'), 'remote', 'remote'],
  ['edited locally, deleted remotely, local wins', editLocal('local'), deleteRemote, 'local', 'local'],
  ['edited locally, deleted remotely, remote wins', editLocal('local'), deleteRemote, 'remote', 'gone'],
  ['deleted locally, edited remotely, local wins', deleteLocal, editRemote('remote'), 'local', 'gone'],
  ['deleted locally, edited remotely, remote wins', deleteLocal, editRemote('remote'), 'remote', 'remote'],
]

describe.each(['spec', 'upstream'] as const)('--prefer settles conflicts (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test.each(PREFER_ROWS)('%s', async (_name, local, remote, prefer, winner) => {
    // Given a conflict
    world = await startWorld(dialect)
    expect((await world.cli('sync')).exitCode).toBe(0)
    await local(world)
    await remote(world)
    expect((await world.cli('sync')).exitCode).toBe(3)
    // When sync prefers one side
    const run = await world.cli('--json', 'sync', '--prefer', prefer)
    // Then both sides hold the winner and nothing is left to do
    expect(run.exitCode).toBe(0)
    if (winner === 'gone') {
      expect(await world.exists('content/news.json')).toBe(false)
      expect(await world.server.get('content', 'news')).toBeUndefined()
    } else {
      expect(await title(world)).toBe(winner)
      expect(await serverTitle(world)).toBe(winner)
    }
    expect((await world.cli('--json', 'status')).json.clean).toBe(true)
    // And the losing version, if there was one, is kept in trash
    const loser = prefer === 'local' ? remote : local
    if (loser !== deleteLocal && loser !== deleteRemote) {
      const kept = await trashFiles(world)
      expect(
        kept.some((f) => f.endsWith(prefer === 'local' ? 'content/news.json.remote' : 'content/news.json')),
      ).toBe(true)
    }
  })
})

async function trashFiles(w: World): Promise<string[]> {
  const entries = await readdir(w.file('.cms-sync/trash'), { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name).split(path.sep).join('/'))
}
