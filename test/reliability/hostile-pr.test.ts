// A hostile pull request against the token, the runner and the secrets (docs/reliability.md
// "Hostile pull request: token, runner and secrets"). The CLI runs as its own process, as a CI job
// runs it, with a real token in CMS_SYNC_TOKEN and `CI=true`; every committed file is the
// attacker's: cms-sync.yaml, cms-sync.lock, connection files, and anything in the tree.

import { chmod, cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import { type CountingProxy, startCountingProxy } from '../helpers/counting-proxy.js'
import { startSelfSignedServer } from '../helpers/self-signed.js'
import { contentOf, startWorld, type World, writeConfig } from '../helpers/sync-world.js'
import { json } from './hostile-server.js'
import { runCli } from './processes.js'
import { ciJob, git, retargetLock } from './pull-request.js'
import { report } from './support.js'

/** A second server behind a proxy that keeps every request's headers: the pull request's host. */
async function thief(
  dialect: 'spec' | 'upstream',
): Promise<{ proxy: CountingProxy; heard: string[]; close(): Promise<void> }> {
  const emulator: Emulator = await startEmulator({ port: 0, dialect })
  const proxy = await startCountingProxy(emulator.url)
  const heard: string[] = []
  proxy.override = (method, route, headers) => {
    heard.push(`${method} ${route} ${JSON.stringify(headers)}`)
    return undefined
  }
  return {
    proxy,
    heard,
    close: async () => {
      await proxy.close()
      await emulator.close()
    },
  }
}

/**
 * The files of a bare repository, as a pull request commits them into the workspace folder: one
 * signed commit touching `content/home.json`, and a config that shows signatures with a
 * "gpg" that is the pull request's script (and an fsmonitor and hooks, for good measure).
 */
async function plantBareRepository(into: string, script: string): Promise<void> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'cms-sync-bare-'))
  try {
    // A signer that answers as gpg does, so the commit carries a signature to verify.
    const signer = path.join(scratch, 'signer.sh')
    await writeFile(
      signer,
      "#!/bin/sh\ncat >/dev/null\nprintf '\\n[GNUPG:] SIG_CREATED D 1 8 00 0 0 0\\n' >&2\nprintf -- '-----BEGIN PGP SIGNATURE-----\\n\\nAAAA\\n-----END PGP SIGNATURE-----\\n'\n",
    )
    await chmod(signer, 0o755)
    const work = path.join(scratch, 'work')
    await mkdir(path.join(work, 'content'), { recursive: true })
    git(work, 'init', '-q')
    await writeFile(path.join(work, 'content', 'home.json'), '{"id":"home"}\n')
    git(work, 'add', '.')
    git(work, '-c', `gpg.program=${signer}`, 'commit', '-q', '-S', '-m', 'signed')
    const bare = path.join(scratch, 'bare')
    git(scratch, 'clone', '-q', '--bare', work, bare)
    for (const [key, value] of [
      ['log.showSignature', 'true'],
      ['gpg.program', script],
      ['core.fsmonitor', script],
      ['core.hooksPath', path.dirname(script)],
      ['diff.external', script],
    ])
      git(bare, 'config', key!, value!)
    for (const name of ['HEAD', 'config', 'objects', 'refs', 'packed-refs'])
      await cp(path.join(bare, name), path.join(into, name), { recursive: true })
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

describe.each(['spec', 'upstream'] as const)('a hostile pull request in CI (%s dialect)', (dialect) => {
  let world: World | undefined
  const closers: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closers.splice(0)) await close()
    await world?.close()
    world = undefined
  })

  async function synced(): Promise<World> {
    const w = await startWorld(dialect, { resources: ['schemas', 'content'] })
    world = w
    expect((await w.cli('sync')).exitCode).toBe(0)
    return w
  }

  test('item 5: cms-sync.yaml and the lock retargeted (or the lock deleted) never take CMS_SYNC_TOKEN to the new host', async () => {
    const w = await synced()
    const other = await thief(dialect)
    closers.push(other.close)
    const token = w.emulator.token()
    // The CI job names its target beside the secret, from repository variables.
    const ci = ciJob(w, { CMS_SYNC_TOKEN: token })
    const leaked = () => other.heard.filter((line) => line.includes(token))
    const commands = [['status', '--exit-code'], ['push'], ['sync'], ['pull'], ['diff'], ['whoami']]
    // The pull request: server and lock target both name its host, in a fresh checkout.
    await rm(w.file('.cms-sync'), { recursive: true })
    await writeConfig(w.root, other.proxy.url, dialect)
    await retargetLock(w, other.proxy.url)
    const cases: [string, () => Promise<void>][] = [
      ['server and lock target edited', async () => {}],
      ['server edited, lock deleted', () => rm(w.file('cms-sync.lock'))],
    ]
    let refused = 0
    for (const [name, make] of cases) {
      await make()
      for (const args of commands) {
        const run = await runCli(['-C', w.root, ...args], ci).done
        const said = `${name}, ${args.join(' ')}: ${run.stderr}${run.stdout}`
        expect(run.code, said).toBe(4)
        expect(run.stderr, said).toMatch(/CMS_SYNC_SERVER names .* nothing was sent/)
        expect(leaked(), said).toEqual([])
        refused++
      }
      // The same job without the variable: in CI a token is never sent to a server only a file names.
      const { CMS_SYNC_SERVER: _named, ...unnamed } = ci
      const bare = await runCli(['-C', w.root, 'status', '--exit-code'], unnamed).done
      expect(bare.code, bare.stderr).toBe(2)
      expect(bare.stderr).toMatch(/CMS_SYNC_TOKEN is set in CI, but CMS_SYNC_SERVER is not/)
      expect(leaked()).toEqual([])
    }
    expect(other.heard).toEqual([])
    // The variables and the file agree: the job runs (the guard is not a blanket block).
    await writeConfig(w.root, w.proxy.url, dialect)
    const fine = await runCli(['-C', w.root, 'status', '--exit-code'], ci).done
    expect([0, 6], fine.stderr).toContain(fine.code)
    report(`attacks/token-to-pr-host/${dialect}`, { commands: refused + 2, tokenSeen: 0 })
  })

  test('item 5: project and environment switched on the same server stop the run before any request', async () => {
    const w = await synced()
    const token = w.emulator.token()
    const ci = ciJob(w, { CMS_SYNC_TOKEN: token })
    const config = await readFile(w.file('cms-sync.yaml'), 'utf8')
    await rm(w.file('.cms-sync'), { recursive: true })
    await rm(w.file('cms-sync.lock'))
    for (const [field, edited] of [
      ['project', config.replace('project: demo', 'project: production')],
      ['environment', config.replace('environment: live', 'environment: main')],
    ] as const) {
      await writeFile(w.file('cms-sync.yaml'), edited)
      w.proxy.seen.length = 0
      for (const args of [['push'], ['sync'], ['status', '--exit-code']]) {
        const run = await runCli(['-C', w.root, ...args], ci).done
        const said = `${field}, ${args.join(' ')}: ${run.stderr}`
        expect(run.code, said).toBe(4)
        expect(run.stderr, said).toContain(`CMS_SYNC_${field.toUpperCase()} names`)
        expect(w.proxy.seen, said).toEqual([])
      }
      // Without the variable in CI: refused as well, naming what to set.
      const { [`CMS_SYNC_${field.toUpperCase()}`]: _named, ...unnamed } = ci as Record<string, string>
      const bare = await runCli(['-C', w.root, 'push'], unnamed).done
      expect(bare.code, bare.stderr).toBe(2)
      expect(bare.stderr).toContain(`CMS_SYNC_${field.toUpperCase()}`)
      expect(w.proxy.seen).toEqual([])
    }
    report(`attacks/token-to-other-project/${dialect}`, { fields: 2, requests: 0 })
  })

  test('item 6: a bare repository committed in the workspace folder runs nothing, and the base still comes from the real repository', async () => {
    const w = await startWorld(dialect, { resources: ['schemas', 'content'] })
    world = w
    // The repository holds the workspace in a subfolder (site/), as a monorepo does.
    const repo = path.dirname(w.root)
    await writeFile(path.join(repo, '.gitignore'), 'xdg/\nsite/.cms-sync/\n')
    expect((await w.cli('sync')).exitCode).toBe(0)
    git(repo, 'init', '-q')
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', 'synced')
    // The pull request: a script, and a bare repository that names it, committed in site/.
    const marker = path.join(repo, 'marker')
    const script = path.join(w.root, 'tools', 'run.sh')
    await mkdir(path.dirname(script), { recursive: true })
    await writeFile(script, `#!/bin/sh\necho "ran $0 token=$CMS_SYNC_TOKEN" >> ${marker}\nexit 1\n`)
    await chmod(script, 0o755)
    await plantBareRepository(w.root, script)
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', 'pull request')
    // A CI checkout (no .cms-sync/), an edit here and another on the server of the same item:
    // the merge asks git for the base.
    await rm(w.file('.cms-sync'), { recursive: true })
    await w.editJson('content/home.json', {
      properties: {
        ...((await w.readJson('content/home.json')).properties as object),
        title: 'edited in the pull request',
      },
    })
    const current = (await w.server.get('content', 'home'))!
    await w.server.put('content', 'home', {
      ...current,
      properties: { ...(current.properties as object), body: 'edited on the server' },
    })
    const token = w.emulator.token()
    const ci = ciJob(w, { CMS_SYNC_TOKEN: token })
    const status = await runCli(['-C', w.root, '--json', 'status'], ci).done
    const sync = await runCli(['-C', w.root, 'sync'], ci).done
    const ran = await stat(marker).then(
      () => readFile(marker, 'utf8'),
      () => 'nothing ran',
    )
    expect(ran).toBe('nothing ran')
    expect(status.code, status.stderr).toBe(0)
    expect(sync.code, sync.stderr + sync.stdout).toBe(0)
    // The merge found its base in the repository that holds site/: both edits are on the server.
    const merged = (await w.server.get('content', 'home'))!.properties as Record<string, unknown>
    expect(merged).toMatchObject({ title: 'edited in the pull request', body: 'edited on the server' })
    report(`attacks/git-bare-repository/${dialect}`, { scriptRuns: 0, merged: true })
  })

  test("item 11: a connection file referencing the runner's variables (the token, a cloud key) sends none of them", async () => {
    const w = await startWorld(dialect, { resources: ['schemas', 'content', 'connections'] })
    world = w
    expect((await w.cli('sync')).exitCode).toBe(0)
    const token = w.emulator.token()
    const cloudKey = 'AKIA-runner-cloud-key-5e1f0c'
    const ci = ciJob(w, {
      CMS_SYNC_TOKEN: token,
      AWS_SECRET_ACCESS_KEY: cloudKey,
      // Even a job that lists the token as a connection secret does not make it one.
      CMS_SYNC_SECRETS: 'CMS_SYNC_TOKEN',
    })
    // Every request body the server receives, to look for the runner's values.
    const bodies: string[] = []
    w.proxy.overrideWithBody = (method, route, body) => {
      bodies.push(`${method} ${route} ${body}`)
      return undefined
    }
    // The pull request: a connection whose deployer is its own host, fed from the runner.
    await w.writeJson('connections/deploy.json', {
      id: 'deploy',
      title: 'Deploy',
      url: 'https://pr-host.test',
      processor: { alias: 'json' },
      deployer: {
        alias: 'git',
        username: 'x',
        repo: 'https://pr-host.test/loot.git',
        branch: 'main',
        password: `$\{CMS_SYNC_TOKEN}`,
        token: `$\{AWS_SECRET_ACCESS_KEY}`,
      },
    })
    await w.editJson('content/home.json', { properties: { title: 'an honest edit beside it' } })
    // The pull request's check: status says the push would fail, naming the file, field and variable.
    const status = await runCli(['-C', w.root, '--json', 'status'], ci).done
    expect(status.code, status.stderr).toBe(1)
    const planned = JSON.stringify(JSON.parse(status.stdout))
    expect(planned).toContain(`deployer.password refers to $\{CMS_SYNC_TOKEN}`)
    expect(planned).toMatch(
      /deployer\.token refers to \$\{AWS_SECRET_ACCESS_KEY\}, which is not declared as a connection secret.*CMS_SYNC_SECRETS=AWS_SECRET_ACCESS_KEY/,
    )
    // The job on main after a merge: the connection fails, the honest edit goes up.
    const push = await runCli(['-C', w.root, '--json', 'push'], ci).done
    expect(push.code, push.stderr).toBe(1)
    const failed = JSON.parse(push.stdout).failed as { path: string; error: string }[]
    expect(failed.map((f) => f.path)).toEqual(['connections/deploy.json'])
    expect(failed[0]!.error).toContain(`$\{CMS_SYNC_TOKEN}`)
    expect(await w.server.get('connection', 'deploy')).toBeUndefined()
    expect(((await w.server.get('content', 'home'))!.properties as { title: string }).title).toBe(
      'an honest edit beside it',
    )
    expect(bodies.filter((body) => body.includes(token) || body.includes(cloudKey))).toEqual([])
    expect(bodies.some((body) => body.includes('an honest edit beside it'))).toBe(true)
    report(`attacks/secret-references/${dialect}`, { references: 2, sent: 0 })
  })

  test('item 5: a CI login never sends the password to a server only cms-sync.yaml names', async () => {
    const w = await synced()
    const other = await thief(dialect)
    closers.push(other.close)
    const password = 'admin'
    const job = { XDG_CONFIG_HOME: w.env.XDG_CONFIG_HOME!, CI: 'true' }
    const heardPassword = () => other.heard.length + other.proxy.seen.length
    await writeConfig(w.root, other.proxy.url, dialect)
    const login = (env: Record<string, string>) =>
      runCli(['-C', w.root, 'login', '--username', 'admin', '--password-stdin'], env, `${password}\n`).done
    const named = await login({ ...job, CMS_SYNC_SERVER: w.proxy.url })
    expect(named.code, named.stderr).toBe(4)
    expect(named.stderr).toContain('CMS_SYNC_SERVER names')
    const unnamed = await login(job)
    expect(unnamed.code, unnamed.stderr).toBe(2)
    expect(unnamed.stderr).toMatch(/login in CI would send the password .* set CMS_SYNC_SERVER/)
    expect(heardPassword()).toBe(0)
    // The job's own --server is its word: the login goes there.
    const given = await runCli(
      ['-C', w.root, 'login', '--server', w.proxy.url, '--username', 'admin', '--password-stdin'],
      job,
      `${password}\n`,
    ).done
    expect(given.code, given.stderr).toBe(0)
    expect(heardPassword()).toBe(0)
    report(`attacks/password-to-pr-host/${dialect}`, { logins: 2, requests: 0 })
  })

  test('status --anonymous reads with no token at all; a server that refuses anonymous reads says so', async () => {
    const w = await synced()
    const headers: string[] = []
    w.proxy.override = (_method, _route, seen) => {
      if (seen.authorization || seen.cookie) headers.push(`${seen.authorization ?? ''} ${seen.cookie ?? ''}`)
      return undefined
    }
    // The pull request's check: CI, the target named, no token, but a token file that must stay unread.
    const check = { XDG_CONFIG_HOME: w.env.XDG_CONFIG_HOME!, CI: 'true', CMS_SYNC_SERVER: w.proxy.url }
    await w.editJson('content/home.json', { properties: { title: 'edited in the pull request' } })
    const run = await runCli(['-C', w.root, '--json', 'status', '--exit-code', '--anonymous'], check).done
    expect(headers).toEqual([])
    if (dialect === 'upstream') {
      expect(run.code, run.stderr).toBe(6)
      expect(JSON.parse(run.stdout)).toMatchObject({ token: { checked: false } })
      const text = await runCli(['-C', w.root, 'status', '--anonymous'], check).done
      expect(text.stderr).toContain('whether a push would be allowed was not checked')
      expect(headers).toEqual([])
    } else {
      expect(run.code, run.stderr).toBe(2)
      expect(run.stdout).toContain('does not allow anonymous reads')
    }
  })
})

test('item 5: tls.insecure committed in cms-sync.yaml sends no token in CI unless the environment says so too', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'cms-sync-tls-ci-'))
  const heard: string[] = []
  const server = await startSelfSignedServer((req, res) => {
    heard.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''} ${req.headers.cookie ?? ''}`)
    const route = (req.url ?? '').split('?')[0]
    if (route === '/api/demo/live/content') return json(res, 200, [contentOf('home')])
    json(res, 404, 'not found')
  })
  const { url } = server
  try {
    const root = path.join(dir, 'site')
    await mkdir(root)
    // The pull request: the right server, with certificate checks turned off.
    await writeFile(
      path.join(root, 'cms-sync.yaml'),
      `server: ${url}\nproject: demo\nenvironment: live\nresources: [content]\ndialect: spec\ntls: { insecure: true }\n`,
    )
    const ci = {
      CMS_SYNC_TOKEN: 'tls-ci-token-0123456789',
      CI: 'true',
      CMS_SYNC_SERVER: url,
      CMS_SYNC_PROJECT: 'demo',
      CMS_SYNC_ENVIRONMENT: 'live',
      XDG_CONFIG_HOME: path.join(dir, 'xdg'),
    }
    for (const args of [['pull'], ['status'], ['whoami']]) {
      const refused = await runCli(['-C', root, ...args], ci).done
      expect(refused.code, refused.stderr).toBe(2)
      expect(refused.stderr).toContain('CMS_SYNC_TLS_INSECURE=true')
    }
    expect(heard).toEqual([])
    // The job's own word: the self-signed server is meant.
    const allowed = await runCli(['-C', root, 'pull'], { ...ci, CMS_SYNC_TLS_INSECURE: 'true' }).done
    expect(allowed.code, allowed.stderr).toBe(0)
    expect(heard.length).toBeGreaterThan(0)
    report('attacks/committed-insecure-tls', { refused: 3, requestsBeforeOptIn: 0 })
  } finally {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
})
