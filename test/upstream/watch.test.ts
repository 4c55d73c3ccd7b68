// `cms-sync watch` as a real process on the real server: a local edit is pushed within moments,
// an edit made on the server is pulled by the poll, and nothing else on the server changes.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contentFile } from '../helpers/fixtures.js'
import {
  expectOnly,
  freshProject,
  initWorkspace,
  SETUP,
  type ServerState,
  serverState,
  startWatching,
  stopWatchingAndClean,
  type Upstream,
  type WatchDaemon,
  type Workspace,
  writeSectionPages,
} from './harness.js'

function page(id: string, title: string) {
  return contentFile(id, { properties: { title } })
}

describe.skipIf(!SETUP)('watch (real upstream server)', () => {
  let up: Upstream
  let ws: Workspace
  let state: ServerState
  let daemon: WatchDaemon | undefined

  beforeAll(async () => {
    up = await freshProject('watch')
    ws = await initWorkspace(up, 'watch')
    await writeSectionPages(ws, { 'w-home': 'Home', 'w-news': 'News' })
    await ws.ok('sync')
    state = await serverState(up.api)
    daemon = await startWatching(ws, { debounceMs: 100, pollSeconds: 1 })
  })
  afterAll(() => stopWatchingAndClean(daemon))

  it('a local edit is pushed, and only that item changes on the server', async () => {
    await ws.writeJson('content/w-home.json', page('w-home', 'Home (saved in the editor)'))
    await daemon!.waitForEvent({ event: 'pushed', path: 'content/w-home.json' }, 60_000)
    state = await expectOnly(up.api, state, { changed: ['content/w-home'] })
    expect(state.content.get('w-home')).toMatchObject({
      properties: { title: 'Home (saved in the editor)' },
      createdBy: up.userId,
    })
  })

  it('an edit on the server is pulled by the poll, and nothing is written back', async () => {
    const news = await up.api.get('content', 'w-news')
    await up.api.put('content', { ...news, properties: { title: 'News (edited on the server)' } })
    state = await serverState(up.api)
    await daemon!.waitForEvent({ event: 'pulled', path: 'content/w-news.json' }, 60_000)
    expect((await ws.readJson('content/w-news.json')).properties).toEqual({
      title: 'News (edited on the server)',
    })
    // A few polls later the server is as the edit left it. A poll that finds nothing emits no
    // event, and the real server keeps no request log to read: three 1 s polls' time.
    await new Promise((resolve) => setTimeout(resolve, 3000))
    state = await expectOnly(up.api, state)
  })

  it('stops cleanly on SIGTERM', async () => {
    daemon!.child.kill('SIGTERM')
    expect((await daemon!.exited).code).toBe(0)
    await ws.expectClean()
  })
})
