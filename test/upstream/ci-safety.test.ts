// What the CI recipe and the threat model (docs/reliability.md, "Safe in a team") rest on, on
// the real server: a pull request's check reads anonymously (no token anywhere in its job), a
// workspace whose cms-sync.yaml names another project is stopped by CMS_SYNC_PROJECT before any
// request, and a connection secret rotated on the server is a conflict, never reverted.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contentFile, SECTION_SCHEMA } from '../helpers/fixtures.js'
import {
  cleanupTemps,
  expectOnly,
  freshProject,
  initWorkspace,
  runCli,
  SETUP,
  type ServerState,
  serverState,
  type Upstream,
  type Workspace,
} from './harness.js'

const VAR = 'CMS_SYNC_SECRET_CI_SITE_DEPLOYER_PASSWORD'
const FIRST = 'ci-first-pw-41d0'
const ROTATED = 'ci-rotated-by-editor-9e27'

describe.skipIf(!SETUP)('CI safety (real upstream server)', () => {
  let up: Upstream
  let ws: Workspace
  let state: ServerState
  /** The pull request's check job: the target named, no token at all. */
  let check: NodeJS.ProcessEnv

  beforeAll(async () => {
    up = await freshProject('ci-safety')
    ws = await initWorkspace(up, 'ci-safety', { [VAR]: FIRST })
    await ws.writeJson('schemas/section.json', SECTION_SCHEMA)
    await ws.writeJson('content/ci-home.json', contentFile('ci-home', { properties: { title: 'Home' } }))
    await up.api.put('connections', {
      id: 'ci-site',
      title: 'Site',
      url: 'https://site.example',
      processor: { alias: 'json' },
      deployer: { alias: 'git', username: 'deploy', password: FIRST, repo: 'https://git.example/r.git' },
    })
    await ws.ok('sync')
    state = await serverState(up.api)
    check = {
      XDG_CONFIG_HOME: ws.env.XDG_CONFIG_HOME,
      CI: 'true',
      CMS_SYNC_SERVER: up.url,
      CMS_SYNC_PROJECT: up.project,
      CMS_SYNC_ENVIRONMENT: up.environment,
    }
  })
  afterAll(cleanupTemps)

  it("a pull request's check reads anonymously: the plan, with no token in its job", async () => {
    await ws.writeJson('content/ci-home.json', contentFile('ci-home', { properties: { title: 'From a PR' } }))
    const run = await runCli(['-C', ws.root, '--json', 'status', '--exit-code', '--anonymous'], check)
    expect(run.code, run.stderr).toBe(6)
    expect(run.json).toMatchObject({
      token: { checked: false },
      changes: [expect.objectContaining({ path: 'content/ci-home.json', action: 'push' })],
    })
    // Without --anonymous, and without a token, status says it cannot vouch for a push.
    const plain = await runCli(['-C', ws.root, 'status', '--exit-code'], check)
    expect(plain.code, plain.stderr).toBe(2)
    await ws.writeJson('content/ci-home.json', contentFile('ci-home', { properties: { title: 'Home' } }))
    state = await expectOnly(up.api, state)
  })

  it('cms-sync.yaml switched to another project stops at CMS_SYNC_PROJECT (exit 4), the server unchanged', async () => {
    const config = (await ws.read('cms-sync.yaml')).toString('utf8')
    const edited = config.replace(/^project: .*$/m, 'project: another-project')
    expect(edited).not.toBe(config)
    await ws.write('cms-sync.yaml', edited)
    try {
      const run = await runCli(['-C', ws.root, 'push'], { ...check, CMS_SYNC_TOKEN: up.token })
      expect(run.code, run.stderr).toBe(4)
      expect(run.stderr).toContain('CMS_SYNC_PROJECT names')
    } finally {
      await ws.write('cms-sync.yaml', config)
    }
    state = await expectOnly(up.api, state)
  })

  it('a password rotated on the server is a conflict for a push of another edit, never reverted', async () => {
    const site = await up.api.get('connections', 'ci-site')
    await up.api.put('connections', {
      ...site,
      deployer: { ...(site.deployer as object), password: ROTATED },
    })
    const file = await ws.readJson('connections/ci-site.json')
    await ws.writeJson('connections/ci-site.json', { ...file, title: 'Site (renamed)' })
    const push = await ws.cli('--json', 'push')
    expect(push.code, push.stdout).toBe(3)
    expect(await up.api.get('connections', 'ci-site')).toMatchObject({
      title: 'Site',
      deployer: { password: ROTATED },
    })
    await ws.ok('push', '--prefer', 'remote')
    expect(await up.api.get('connections', 'ci-site')).toMatchObject({
      title: 'Site (renamed)',
      deployer: { password: ROTATED },
    })
    for (const output of [push.stdout, push.stderr]) {
      expect(output).not.toContain(FIRST)
      expect(output).not.toContain(ROTATED)
    }
  })
})
