// Secrets: the token (given or from a login) appears in no workspace file, no log, no output and no
// error message, even when a server echoes them back; the credentials file is mode 0600; TLS
// certificates are verified for a whole command run unless the workspace opts out.

import { mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { cli } from '../helpers/cli.js'
import { startSelfSignedServer } from '../helpers/self-signed.js'
import { contentOf, startWorld, type World } from '../helpers/sync-world.js'
import { json } from './hostile-server.js'
import { runCli } from './processes.js'
import { SECRET, SECRET_VAR, SESSION_ENV } from './session.js'
import { bytesUnder, filesUnder, report, secretsIn } from './support.js'

describe.each(['spec', 'upstream'] as const)('secrets (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test('the token stays out of files, logs, output and errors, even when the server echoes it; credentials are 0600', async () => {
    world = await startWorld(dialect)
    const w = world
    const token = w.emulator.token()
    const env = { ...w.env, CMS_SYNC_TOKEN: token }
    const run = (...args: string[]) => cli(['-C', w.root, ...args], { cwd: w.root, env })
    const outputs: string[] = []
    const record = (r: { stdout: string; stderr: string }) => outputs.push(r.stdout, r.stderr)
    // Every command, verbose, including failing ones
    for (const args of [
      ['-v', 'sync'],
      ['-v', 'status'],
      ['-v', '--json', 'status'],
      ['-v', 'diff'],
      ['-v', 'pull'],
      ['-v', 'push'],
    ])
      record(await run(...args))
    await w.editJson('content/home.json', { properties: { title: 'changed' } })
    w.emulator.setFaults('error=1')
    record(await run('-v', 'sync'))
    w.emulator.setFaults({})
    // A server that echoes the request's headers (cookie, authorization) in its error text
    let echoed = 0
    w.proxy.override = (_m, _r, headers) => {
      echoed++
      return { status: 500, body: `failed for ${headers.cookie} / ${headers.authorization ?? ''}` }
    }
    record(await run('-v', 'sync'))
    record(await run('-v', '--json', 'pull'))
    w.proxy.override = undefined
    // Logging in with a password stores the token in the credentials file, mode 0600
    const xdg = path.join(w.root, '..', 'xdg-login')
    const login = await cli(
      ['-C', w.root, '-v', 'login', '--username', 'admin', '--password-stdin', '--persist'],
      {
        cwd: w.root,
        env: { XDG_CONFIG_HOME: xdg },
        stdin: 'admin\n',
      },
    )
    record(login)
    expect(login.exitCode, login.stderr).toBe(0)
    const credentials = path.join(xdg, 'cms-sync', 'credentials.yaml')
    expect((await stat(credentials)).mode & 0o777).toBe(0o600)
    const stored = /token:\s*"?([0-9a-f]{20,})/.exec(await readFile(credentials, 'utf8'))?.[1]
    expect(stored).toBeDefined()
    const secrets = [token, stored!]
    // Then no workspace file (logs included) and no output holds them
    expect(await secretsIn(w.root, [token, stored!])).toEqual([])
    const leaks = outputs.filter((o) => secrets.some((s) => o.includes(s)))
    expect(leaks).toEqual([])
    const logs = [...(await bytesUnder(path.join(w.root, '.cms-sync', 'logs')))]
    expect(logs.length).toBeGreaterThan(0)
    report(`secrets/${dialect}`, {
      runs: outputs.length / 2,
      filesScanned: (await bytesUnder(w.root)).size,
      logFiles: logs.length,
      serverEchoesOfTheToken: echoed,
      leaks: 0,
      credentialsMode: '0600',
    })
  })
})

const ALL = ['schemas', 'content', 'media', 'forms', 'connections']
const SERVER_SECRET = 'server-side-pw-91c3e0aa'
const connection = (id: string, title: string, password: string) => ({
  id,
  title,
  url: 'https://example.test',
  processor: { alias: 'json' },
  deployer: { alias: 'git', username: 'deploy', password, repo: 'https://git.test/r.git', branch: 'main' },
})

describe.each(['spec', 'upstream'] as const)('connection secrets (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test('connection secrets stay out of files, state, trash, conflicts, logs, output and errors, even when the server echoes the request body', async () => {
    world = await startWorld(dialect, { resources: ALL })
    const w = world
    Object.assign(w.extraEnv, SESSION_ENV)
    // The server holds two connections and sends their secrets back in every read (upstream §5.4)
    await w.server.put('connection', 'site', connection('site', 'Site', SECRET))
    await w.server.put('connection', 'other', connection('other', 'Other', SERVER_SECRET))
    const outputs: string[] = []
    const record = <R extends { stdout: string; stderr: string }>(r: R): R => {
      outputs.push(r.stdout, r.stderr)
      return r
    }
    expect(record(await w.cli('-v', 'sync')).exitCode).toBe(0)
    // The file names a variable; with it set, an edit pushes the secret resolved from it
    const site = await w.readJson('connections/site.json')
    await w.writeJson('connections/site.json', {
      ...site,
      title: 'Site 2',
      deployer: { ...(site.deployer as object), password: `$\{${SECRET_VAR}}` },
    })
    expect(record(await w.cli('-v', '--json', 'push')).exitCode).toBe(0)
    expect((await w.server.get('connection', 'site'))?.deployer).toMatchObject({ password: SECRET })
    // A server that refuses the write and quotes the request body (the resolved secret) back
    let echoed = 0
    for (const status of [400, 500]) {
      await w.editJson('connections/site.json', { title: `Site ${status}` })
      w.proxy.overrideWithBody = (method, route, body) => {
        if (method === 'GET' || !route.includes('/connections/')) return undefined
        echoed++
        return { status, body: `could not store ${body}` }
      }
      const refused = record(await w.cli('-v', '--json', 'push'))
      w.proxy.overrideWithBody = undefined
      expect(refused.exitCode, refused.stderr).toBe(1)
      expect(JSON.stringify(refused.json.failed)).toMatch(/could not store/)
    }
    // Both sides edit the connection: a conflict, then each way of settling it
    await w.editJson('connections/site.json', { title: 'local' })
    const current = (await w.server.get('connection', 'site'))!
    await w.server.put('connection', 'site', { ...current, title: 'remote' })
    expect(record(await w.cli('-v', 'sync')).exitCode).toBe(3)
    expect(record(await w.cli('-v', 'diff')).exitCode).toBeLessThan(2)
    expect(record(await w.cli('-v', 'sync', '--prefer', 'remote')).exitCode).toBe(0)
    // The server changes the other secret while the variable holds the old one: reported, never written
    w.extraEnv.CMS_SYNC_SECRET_OTHER_DEPLOYER_PASSWORD = 'stale-local-value'
    const other = (await w.server.get('connection', 'other'))!
    await w.server.put('connection', 'other', {
      ...other,
      deployer: { ...(other.deployer as object), password: `${SERVER_SECRET}-v2` },
    })
    expect(record(await w.cli('-v', 'pull')).exitCode).toBe(1)
    for (const args of [
      ['-v', 'status'],
      ['-v', '--json', 'status'],
      ['-v', 'diff'],
    ])
      record(await w.cli(...args))
    // Nowhere: no workspace file (state, trash, conflicts and logs included), no output, no error
    const secrets = [SECRET, SERVER_SECRET, 'stale-local-value']
    const logText = await readFile(w.file('.cms-sync/logs/cms-sync.log'), 'utf8')
    expect(logText.split('\n').filter((line) => secrets.some((secret) => line.includes(secret)))).toEqual([])
    expect(await secretsIn(w.root, secrets)).toEqual([])
    expect(outputs.filter((o) => secrets.some((secret) => o.includes(secret)))).toEqual([])
    const files = [...(await bytesUnder(w.root))].map(([rel]) => rel)
    expect(files.some((rel) => rel.startsWith('.cms-sync/trash/'))).toBe(true)
    expect(files.some((rel) => rel.startsWith('.cms-sync/logs/'))).toBe(true)
    report(`secrets/connections/${dialect}`, {
      runs: outputs.length / 2,
      filesScanned: files.length,
      serverEchoesOfTheRequestBody: echoed,
      leaks: 0,
    })
  })
})

test('a self-signed server is refused by a whole sync run, and accepted only with tls.insecure', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'cms-sync-tls-run-'))
  const seen: string[] = []
  const server = await startSelfSignedServer((req, res) => {
    seen.push(`${req.method} ${req.url}`)
    const route = (req.url ?? '').split('?')[0]
    if (route === '/api/demo/live/content') return json(res, 200, [contentOf('home')])
    if (route === '/api/demo/live/schemas') return json(res, 200, [])
    json(res, 404, 'not found')
  })
  const { url } = server
  try {
    const root = path.join(dir, 'site')
    await mkdir(root)
    const config = `server: ${url}\nproject: demo\nenvironment: live\nresources: [content]\ndialect: spec\n`
    await writeFile(path.join(root, 'cms-sync.yaml'), config)
    const env = { CMS_SYNC_TOKEN: 'tls-test-token-0123456789', XDG_CONFIG_HOME: path.join(dir, 'xdg') }
    const refused = await cli(['-C', root, 'pull'], { cwd: root, env })
    expect(refused.exitCode).not.toBe(0)
    expect(refused.stderr).toMatch(/TLS certificate was refused.*tls.insecure: true/)
    expect(seen).toEqual([]) // the handshake failed: no request, so no token, reached it
    await writeFile(path.join(root, 'cms-sync.yaml'), `${config}tls: { insecure: true }\n`)
    const allowed = await cli(['-C', root, 'pull'], { cwd: root, env })
    expect(allowed.exitCode, allowed.stderr).toBe(0)
    expect(JSON.parse(await readFile(path.join(root, 'content/home.json'), 'utf8')).id).toBe('home')
    report('secrets/tls', { refusedWithoutOptOut: true, requestsBeforeOptOut: 0 })
  } finally {
    await server.close()
  }
})

// Secrets a key-name guess misses (issue 14 item 6): a credential in a URL, an Authorization
// header, values in arrays, keys such as `auth`, `pass`, `apiKey`, `clientSecret`. Every string
// of a deployer's settings not known to be harmless is a secret: the file holds a reference, a
// pull writes none of them anywhere, and a pull -> push round trip leaves every one on the server.
const HIDDEN = {
  url: 'https://site-user:url-pw-5d1e77@site.test/',
  repo: 'https://ghp_tokeninuser8c21@git.test/org/site.git',
  auth: 'auth-value-0b7e4d',
  pass: 'pass-value-61aa2c',
  apiKey: 'apikey-value-93f0b1',
  clientSecret: 'client-secret-7ce2a9',
  header: 'Bearer header-token-4410fe',
  first: 'array-secret-one-a81c',
  second: 'array-secret-two-57d3',
  hook: 'https://hooks.test/deploy?sig=signed-q-2b9e',
} as const

const hiddenConnection = (id: string) => ({
  id,
  title: 'Hidden',
  url: HIDDEN.url,
  processor: { alias: 'json' },
  deployer: {
    alias: 'git',
    paths: { media: 'media', content: 'content' },
    username: 'deploy',
    branch: 'main',
    repo: HIDDEN.repo,
    auth: HIDDEN.auth,
    pass: HIDDEN.pass,
    apiKey: HIDDEN.apiKey,
    clientSecret: HIDDEN.clientSecret,
    headers: { Authorization: HIDDEN.header },
    keys: [HIDDEN.first, { value: HIDDEN.second }],
    hook: HIDDEN.hook,
    retries: 3,
  },
})

describe.each(['spec', 'upstream'] as const)(
  'connection secrets a key name does not tell (%s dialect)',
  (dialect) => {
    let world: World
    afterEach(async () => world?.close())

    test('URLs with credentials, headers, arrays and any other deployer setting stay out of files; a round trip keeps them on the server', async () => {
      world = await startWorld(dialect, { resources: ['connections'], content: [] })
      const w = world
      await w.server.put('connection', 'hidden', hiddenConnection('hidden'))
      const serverBefore = (await w.server.get('connection', 'hidden'))!
      const secrets = Object.values(HIDDEN)
      for (const secret of secrets) expect(JSON.stringify(serverBefore)).toContain(secret)
      const base = path.dirname(w.root)
      await writeFile(path.join(base, 'sentinel.txt'), 'beside the workspace\n')
      const outsideNow = () => filesUnder(base, (rel) => rel === 'site' || rel.startsWith('site/'))
      const outsideBefore = await outsideNow()
      const outputs: string[] = []

      // When the shipped CLI pulls
      const pull = await runCli(['-C', w.root, '-v', '--json', 'pull'], w.env).done
      outputs.push(pull.stdout, pull.stderr)
      expect(pull.code, pull.stderr).toBe(0)
      // Then the file holds a reference for every secret and the harmless settings as they are
      const file = await w.readJson('connections/hidden.json')
      const deployer = file.deployer as Record<string, unknown>
      expect(file.url).toBe(`$\{CMS_SYNC_SECRET_HIDDEN_URL}`)
      expect(deployer).toMatchObject({
        alias: 'git',
        paths: { media: 'media', content: 'content' },
        username: 'deploy',
        branch: 'main',
        retries: 3,
        repo: `$\{CMS_SYNC_SECRET_HIDDEN_DEPLOYER_REPO}`,
        auth: `$\{CMS_SYNC_SECRET_HIDDEN_DEPLOYER_AUTH}`,
        headers: { Authorization: `$\{CMS_SYNC_SECRET_HIDDEN_DEPLOYER_HEADERS_AUTHORIZATION}` },
        keys: [
          `$\{CMS_SYNC_SECRET_HIDDEN_DEPLOYER_KEYS_0}`,
          { value: `$\{CMS_SYNC_SECRET_HIDDEN_DEPLOYER_KEYS_1_VALUE}` },
        ],
        hook: `$\{CMS_SYNC_SECRET_HIDDEN_DEPLOYER_HOOK}`,
      })
      expect(await secretsIn(w.root, secrets)).toEqual([])

      // When the title is edited and pushed without the variables: refused, nothing sent
      await w.editJson('connections/hidden.json', { title: 'Hidden 2' })
      const refused = await w.cli('-v', '--json', 'push')
      outputs.push(refused.stdout, refused.stderr)
      expect(refused.exitCode).toBe(1)
      expect(JSON.stringify(refused.json)).toMatch(/not set in the environment/)
      expect(await w.server.get('connection', 'hidden')).toEqual(serverBefore)
      // When the variables hold the server's values: the push changes the title and keeps every secret
      const names: Record<string, string> = {
        CMS_SYNC_SECRET_HIDDEN_URL: HIDDEN.url,
        CMS_SYNC_SECRET_HIDDEN_DEPLOYER_REPO: HIDDEN.repo,
        CMS_SYNC_SECRET_HIDDEN_DEPLOYER_AUTH: HIDDEN.auth,
        CMS_SYNC_SECRET_HIDDEN_DEPLOYER_PASS: HIDDEN.pass,
        CMS_SYNC_SECRET_HIDDEN_DEPLOYER_APIKEY: HIDDEN.apiKey,
        CMS_SYNC_SECRET_HIDDEN_DEPLOYER_CLIENTSECRET: HIDDEN.clientSecret,
        CMS_SYNC_SECRET_HIDDEN_DEPLOYER_HEADERS_AUTHORIZATION: HIDDEN.header,
        CMS_SYNC_SECRET_HIDDEN_DEPLOYER_KEYS_0: HIDDEN.first,
        CMS_SYNC_SECRET_HIDDEN_DEPLOYER_KEYS_1_VALUE: HIDDEN.second,
        CMS_SYNC_SECRET_HIDDEN_DEPLOYER_HOOK: HIDDEN.hook,
      }
      Object.assign(w.extraEnv, names)
      const pushed = await w.cli('-v', '--json', 'push')
      outputs.push(pushed.stdout, pushed.stderr)
      expect(pushed.exitCode, pushed.stderr).toBe(0)
      const serverAfter = (await w.server.get('connection', 'hidden'))!
      expect(serverAfter).toEqual({ ...serverBefore, title: 'Hidden 2' })
      // And a pull after it writes nothing new (no echo) and still no secret
      const again = await w.cli('-v', '--json', 'sync')
      outputs.push(again.stdout, again.stderr)
      expect(again.exitCode, again.stderr).toBe(0)
      expect((again.json as { applied: unknown[] }).applied).toEqual([])
      // Nowhere: no workspace file (state and logs included), no output; nothing outside changed
      expect(await secretsIn(w.root, secrets)).toEqual([])
      expect(outputs.filter((o) => secrets.some((secret) => o.includes(secret)))).toEqual([])
      expect(await outsideNow()).toEqual(outsideBefore)
      report(`secrets/connections-unnamed/${dialect}`, {
        secretsOnTheServer: secrets.length,
        inFiles: 0,
        keptThroughRoundTrip: secrets.length,
      })
    })
  },
)

// A secret rotated on the server (issue 21 item 4): the connection's revision masks its secrets,
// so nothing the planner hashes changes; a push of an unrelated edit of the connection must not
// send the variable's older value back over it. The built CLI, as a CI job runs it.
describe.each(['spec', 'upstream'] as const)('a secret rotated on the server (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test('an unrelated edit is a conflict of the secret leaf, never a silent revert; each way of settling it; an unset variable is predicted', async () => {
    world = await startWorld(dialect, { resources: ['connections'], content: [] })
    const w = world
    const VAR = 'CMS_SYNC_SECRET_SITE_DEPLOYER_PASSWORD'
    const [first, rotated, mine] = ['first-pw-3a9c01', 'rotated-by-editor-77b2e4', 'rotated-here-c05d18']
    await w.server.put('connection', 'site', connection('site', 'Site', first))
    const env = (value: string | undefined) => {
      const { [VAR]: _old, ...rest } = w.env
      return value === undefined ? rest : { ...rest, [VAR]: value }
    }
    const outputs: string[] = []
    const run = async (value: string | undefined, ...args: string[]) => {
      const done = await runCli(['-C', w.root, ...args], env(value)).done
      outputs.push(done.stdout, done.stderr)
      return done
    }
    expect((await run(first, 'sync')).code).toBe(0)
    const password = async () =>
      ((await w.server.get('connection', 'site'))!.deployer as { password: string }).password
    const title = async () => (await w.server.get('connection', 'site'))!.title

    // An editor rotates the password; here the title is edited, the variable still the old one.
    const current = (await w.server.get('connection', 'site'))!
    await w.server.put('connection', 'site', {
      ...current,
      deployer: { ...(current.deployer as object), password: rotated },
    })
    await w.editJson('connections/site.json', { title: 'Site, renamed here' })
    // status: the drift is a problem of its own (exit 1, as pull says), and the planned push a conflict.
    const status = await run(first, '--json', 'status')
    expect(status.code, status.stderr + status.stdout).toBe(1)
    expect(JSON.stringify(JSON.parse(status.stdout).problems)).toContain('--prefer local')
    const change = JSON.parse(status.stdout).changes.find(
      (c: { path: string }) => c.path === 'connections/site.json',
    )
    expect(change).toMatchObject({
      action: 'conflict',
      leaves: [{ path: '/deployer/password', local: `\${${VAR}}` }],
    })
    expect(change.reason).toContain('the server holds another secret')
    // push: the conflict (3); sync: also the drift its pull reports (1). Neither writes the item.
    for (const [command, code] of [
      ['push', 3],
      ['sync', 1],
    ] as const) {
      const refused = await run(first, command)
      const said = `${command}: ${refused.stderr}${refused.stdout}`
      expect(refused.code, said).toBe(code)
      expect(said).toMatch(/conflict +connections\/site\.json/)
      expect(await password()).toBe(rotated)
      expect(await title()).toBe('Site')
    }

    // Settled for the server: the title goes up, the editor's password stays.
    const kept = await run(first, 'push', '--prefer', 'remote')
    expect(kept.code, kept.stderr + kept.stdout).toBe(0)
    expect(await title()).toBe('Site, renamed here')
    expect(await password()).toBe(rotated)

    // The variable set to the server's value: no conflict, an edit pushes as usual.
    await w.editJson('connections/site.json', { title: 'Site 3' })
    expect((await run(rotated, 'push')).code).toBe(0)
    expect(await password()).toBe(rotated)

    // Rotated here: a conflict too (who changed it cannot be told), sent only on --prefer local.
    await w.editJson('connections/site.json', { title: 'Site 4' })
    expect((await run(mine, 'push')).code).toBe(3)
    expect(await password()).toBe(rotated)
    const sent = await run(mine, 'push', '--prefer', 'local')
    expect(sent.code, sent.stderr + sent.stdout).toBe(0)
    expect(await password()).toBe(mine)

    // No variable at all: status says the push would fail, naming the variable; nothing is sent.
    await w.editJson('connections/site.json', { title: 'Site 5' })
    const predicted = await run(undefined, '--json', 'status')
    expect(predicted.code, predicted.stderr).toBe(1)
    expect(predicted.stdout).toContain(`deployer.password refers to \${${VAR}}, which is not set`)
    expect((await run(undefined, 'push')).code).toBe(1)
    expect(await title()).toBe('Site 4')

    const secrets = [first, rotated, mine]
    expect(outputs.filter((o) => secrets.some((s) => o.includes(s)))).toEqual([])
    expect(await secretsIn(w.root, secrets)).toEqual([])
    report(`secrets/rotated/${dialect}`, { reverted: 0, conflicts: 3, leaks: 0 })
  })
})
