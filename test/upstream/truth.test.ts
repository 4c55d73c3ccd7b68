// Status tells the whole truth on the real server: a media file replaced in the UI under the same
// name (no dates, sizes or validators anywhere) is "unverified", never "clean", until its bytes
// are read: `status --checksum` shows it, and watch's paced re-reads pull it. And `logout`
// takes the server's 302 to its start page for what it is: the token ended.

import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseMediaIndex } from '../../src/workspace/media-index.js'
import { runBuilt } from '../helpers/built-cli.js'
import {
  cleanupTemps,
  freshProject,
  initWorkspace,
  REPO_EXAMPLE,
  SETUP,
  startWatching,
  stopWatchingAndClean,
  type Upstream,
  type WatchDaemon,
  type Workspace,
} from './harness.js'

describe.skipIf(!SETUP)('status and watch never claim unread media bytes (real upstream server)', () => {
  let up: Upstream
  let ws: Workspace
  let id: string
  let daemon: WatchDaemon | undefined
  const replaced = Buffer.from('bytes the editor uploaded in the CMS under the same name')

  beforeAll(async () => {
    up = await freshProject('truth')
    ws = await initWorkspace(up, 'truth')
    await ws.ok('pull')
    await ws.write('media/images/hero.png', await readFile(path.join(REPO_EXAMPLE, 'media/images/hero.png')))
    await ws.ok('push')
    id = Object.fromEntries(parseMediaIndex(await readFile(path.join(ws.root, 'media.yaml'), 'utf8')))[
      'images/hero.png'
    ]!
  })
  afterAll(() => stopWatchingAndClean(daemon))

  it('a replacement in the UI: status says unverified and since when; --checksum shows the pull', async () => {
    // The UI's own upload: the same id, new bytes; the listing stays as it was.
    const form = new FormData()
    form.append('media', new Blob([replaced]), 'hero.png')
    const res = await fetch(`${up.url}/api/${up.project}/${up.environment}/media/${id}`, {
      method: 'POST',
      body: form,
      headers: { cookie: `token=${up.token}` },
    })
    expect(res.status).toBeLessThan(300)
    expect(await up.api.mediaBytes(id)).toEqual(replaced)

    const status = await ws.ok('status')
    expect(status.stdout).not.toMatch(/clean|agree/)
    expect(status.stdout).toMatch(
      /unverified +1 media item: the server's bytes were not compared \(last compared .*\)/,
    )
    // biome-ignore lint/suspicious/noExplicitAny: parsed --json output
    const json = (await ws.ok('--json', 'status')) as { json: any }
    expect(json.json.changes).toEqual([])
    expect(json.json.unverified).toMatchObject([{ path: 'media/images/hero.png', id }])
    // biome-ignore lint/suspicious/noExplicitAny: parsed --json output
    const checked = (await ws.ok('--json', 'status', '--checksum')) as { json: any }
    expect(checked.json.changes).toMatchObject([{ path: 'media/images/hero.png', action: 'pull' }])
    expect(checked.json.unverified).toBeUndefined()
  })

  it('watch re-reads it within watch.verifyMedia and pulls the replacement', async () => {
    const config = path.join(ws.root, 'cms-sync.yaml')
    const text = (await readFile(config, 'utf8')).replace(/^watch:.*$/m, '')
    await writeFile(
      config,
      `${text}\nwatch: { debounceMs: 100, pollSeconds: 1, verifyMedia: { requestsPerHour: 3600, megabytesPerHour: 50 } }\n`,
    )
    daemon = await startWatching(ws)
    await daemon.waitForEvent({ event: 'verified', path: 'media/images/hero.png', same: false }, 60_000)
    await daemon.waitForEvent({ event: 'pulled', path: 'media/images/hero.png' }, 60_000)
    expect(await ws.read('media/images/hero.png')).toEqual(replaced)
  })
})

describe.skipIf(!SETUP)('logout (real upstream server)', () => {
  it("takes the server's 302 to its start page as the token ended", async () => {
    const up = await freshProject('logout')
    const ws = await initWorkspace(up, 'logout', { CMS_SYNC_TOKEN: '' })
    const env = { XDG_CONFIG_HOME: ws.env.XDG_CONFIG_HOME }
    const login = await runBuilt(['-C', ws.root, 'login', '--username', up.user, '--password-stdin'], {
      cwd: ws.root,
      env,
      stdin: `${up.pass}\n`,
    })
    expect(login.code, login.stderr).toBe(0)
    const credentials = await readFile(
      path.join(env.XDG_CONFIG_HOME!, 'cms-sync', 'credentials.yaml'),
      'utf8',
    )
    const token = /[0-9a-f]{40}/.exec(credentials)![0]
    const out = await runBuilt(['-C', ws.root, '--json', 'logout'], { cwd: ws.root, env })
    expect(out.code, out.stderr).toBe(0)
    expect(out.json).toMatchObject({ forgotten: true, endedOnServer: true })
    const me = await fetch(`${up.url}/api/user`, { headers: { cookie: `token=${token}` } })
    expect(me.status).not.toBe(200)
    await cleanupTemps()
  })
})
