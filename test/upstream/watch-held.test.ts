// `cms-sync watch` on the real server when another client deletes most of a kind: the
// deletions are held (a held event, status's held list, the commands), everything else keeps
// syncing both ways, and the release command carried out by the daemon deletes them here.

import { stat } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contentFile } from '../helpers/fixtures.js'
import {
  freshProject,
  initWorkspace,
  SETUP,
  startWatching,
  stopWatchingAndClean,
  type Upstream,
  type WatchDaemon,
  type Workspace,
  writeSectionPages,
} from './harness.js'

const IDS = Array.from({ length: 35 }, (_, i) => `h-${String(i).padStart(2, '0')}`)
const GONE = IDS.slice(0, 25)
const paths = GONE.map((id) => `content/${id}.json`)

const exists = (ws: Workspace, rel: string) =>
  stat(path.join(ws.root, rel)).then(
    () => true,
    () => false,
  )

describe.skipIf(!SETUP)('watch holds what a guard is about (real upstream server)', () => {
  let up: Upstream
  let ws: Workspace
  let daemon: WatchDaemon | undefined

  beforeAll(async () => {
    up = await freshProject('watch-held')
    ws = await initWorkspace(up, 'watch-held')
    await writeSectionPages(ws, Object.fromEntries(IDS.map((id) => [id, id])))
    await ws.ok('sync')
    daemon = await startWatching(ws, { debounceMs: 100, pollSeconds: 1 })
  })
  afterAll(() => stopWatchingAndClean(daemon))

  it('25 of 36 items deleted by another client: held, told, and shown by status', async () => {
    // All at once, as one bulk delete in the CMS's UI: deleted one after another, a poll landing
    // between two deletes sees only part of them (each part under the threshold: not this scenario).
    await Promise.all(GONE.map((id) => up.api.remove('content', id)))
    const { held } = await daemon!.waitForEvent({ event: 'held' }, 60_000)
    expect(held).toEqual([
      expect.objectContaining({
        guard: 'max-delete',
        side: 'remote',
        kind: 'content',
        action: 'delete-local',
        paths,
        release: `cms-sync resolve --keep remote ${paths.join(' ')}`,
      }),
    ])
    const status = (await ws.cli('--json', 'status')).json as { held?: unknown[] }
    expect(status.held).toEqual([expect.objectContaining({ guard: 'max-delete', paths })])
    for (const rel of paths) expect(await exists(ws, rel)).toBe(true)
    expect(daemon!.events.filter((e) => e.event === 'error')).toEqual([])
  })

  it('everything else still syncs both ways', async () => {
    const item = await up.api.get('content', 'h-30')
    await up.api.put('content', { ...item, properties: { title: 'edited in the UI' } })
    await daemon!.waitForEvent({ event: 'pulled', path: 'content/h-30.json' }, 60_000)
    await ws.writeJson('content/h-31.json', contentFile('h-31', { properties: { title: 'edited here' } }))
    await daemon!.waitForEvent({ event: 'pushed', path: 'content/h-31.json' }, 60_000)
    expect((await up.api.get('content', 'h-31')).properties).toEqual({ title: 'edited here' })
  })

  it('the release command, carried out by the daemon, deletes them here and nothing is held', async () => {
    await ws.ok('resolve', '--keep', 'remote', ...paths)
    for (const rel of paths) expect(await exists(ws, rel)).toBe(false)
    const status = (await ws.ok('--json', 'status')).json as { held?: unknown[] }
    expect(status.held).toBeUndefined()
  })

  it('stops cleanly on SIGTERM', async () => {
    daemon!.child.kill('SIGTERM')
    expect((await daemon!.exited).code).toBe(0)
  })
})
