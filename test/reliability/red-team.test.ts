// The red team's attacks on a CI job (docs/reliability.md "Hostile pull request: found by the red
// team"): each one a pull request's files, committed to a real repository, cloned as a CI
// checkout, and the built CLI run there as its own process with a real token and `CI=true`.

import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { gitConnection } from '../helpers/fixtures.js'
import { contentOf, startWorld, type World, writeConfig } from '../helpers/sync-world.js'
import { runCli } from './processes.js'
import { ciJob, git, retargetLock, startThief } from './pull-request.js'
import { SECRET } from './session.js'
import { report, secretsIn } from './support.js'

describe.each(['spec', 'upstream'] as const)('the red team against a CI job (%s dialect)', (dialect) => {
  let world: World | undefined
  afterEach(async () => {
    await world?.close()
    world = undefined
  })

  /**
   * A synced workspace in site/ of a repository whose .gitignore keeps .cms-sync/ out, committed;
   * `ci` is the environment of the recipe's push job against it.
   */
  async function committed(): Promise<{ w: World; repo: string; ci: NodeJS.ProcessEnv }> {
    const w = await startWorld(dialect, { resources: ['schemas', 'content'] })
    world = w
    const repo = path.dirname(w.root)
    await writeFile(path.join(repo, '.gitignore'), 'xdg/\nsite/.cms-sync/\nci/\n')
    expect((await w.cli('sync')).exitCode).toBe(0)
    git(repo, 'init', '-q', '-b', 'main')
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', 'synced')
    return { w, repo, ci: ciJob(w) }
  }

  /** The CI checkout of the repository's HEAD: a fresh clone, site/ in it. */
  function checkout(repo: string): string {
    const at = path.join(repo, 'ci')
    git(repo, 'clone', '-q', repo, at)
    return path.join(at, 'site')
  }

  test('a committed .cms-sync/state/ is no base: it cannot delete a server item the repository never held', async () => {
    const { w, repo, ci } = await committed()
    // An editor's page, made on the server after the last commit; the repository never held it.
    await w.server.put('content', 'pricing', contentOf('pricing', { properties: { title: 'by an editor' } }))
    // The pull request's author syncs their own copy (an anonymous read would do as well), so
    // their state and lock name the page at the server's revision; then deletes the file and
    // commits the state with the rest, past .gitignore.
    expect((await w.cli('sync')).exitCode).toBe(0)
    await w.remove('content/pricing.json')
    git(repo, 'add', '-A')
    git(repo, 'add', '-f', 'site/.cms-sync/state')
    git(repo, 'commit', '-q', '-m', 'pull request: tidy up')
    const site = checkout(repo)

    w.proxy.seen.length = 0
    const run = await runCli(['-C', site, 'push'], ci).done
    const said = `${run.code}: ${run.stderr}${run.stdout}`
    // The editor's page is still on the server, as it was.
    expect((await w.server.get('content', 'pricing'))?.properties, said).toMatchObject({
      title: 'by an editor',
    })
    expect(run.code, said).toBe(2)
    expect(run.stderr, said).toContain('.cms-sync/state/index.json')
    expect(run.stderr, said).toMatch(/committed/)
    expect(
      w.proxy.seen.filter((r) => !r.startsWith('GET ')),
      said,
    ).toEqual([])
    report(`attacks/red-team/committed-state/${dialect}`, { refused: true })
  })

  test('no program cms-sync starts is handed the token or a connection secret', async () => {
    const { w, repo, ci } = await committed()
    // The programs a run may start (git for a base, coreutils `sync` for durability), each a
    // stand-in first on PATH that writes down its environment and then does nothing.
    const bin = path.join(repo, 'ci-bin')
    const heard = path.join(repo, 'ci-heard')
    await mkdir(bin)
    for (const name of ['sync', 'git'])
      await writeFile(path.join(bin, name), `#!/bin/sh\nenv >> '${heard}'\nexit 1\n`, { mode: 0o755 })
    const secret = 'connection-secret-value-4711'
    const env = {
      ...ci,
      PATH: `${bin}${path.delimiter}${process.env.PATH}`,
      CMS_SYNC_SECRET_WEBSITE_PASSWORD: secret,
    }
    await w.server.put('content', 'pricing', contentOf('pricing'))
    const run = await runCli(['-C', w.root, 'pull'], env).done
    expect(run.code, run.stderr).toBe(0)
    const seen = await readFile(heard, 'utf8').catch(() => '')
    expect(seen, 'no program was started: the test proves nothing').not.toBe('')
    expect(seen.includes(ci.CMS_SYNC_TOKEN!), 'the token').toBe(false)
    expect(seen.includes(secret), 'a connection secret').toBe(false)
  })

  test('a CI service that does not set CI (Jenkins, Azure Pipelines, CodeBuild, TeamCity) is still CI: the token never goes to a host only cms-sync.yaml names', async () => {
    const { w } = await committed()
    const thief = await startThief((req) => JSON.stringify(req.headers))
    const { heard, url: host } = thief
    try {
      // The pull request: its host in cms-sync.yaml, no lock; the job's checkout has no state.
      await writeConfig(w.root, host, dialect)
      await rm(w.file('cms-sync.lock'))
      await rm(w.file('.cms-sync'), { recursive: true })
      const token = w.env.CMS_SYNC_TOKEN!
      for (const [service, marker] of [
        ['Jenkins', { JENKINS_URL: 'http://jenkins.invalid/', BUILD_ID: '7' }],
        ['Azure Pipelines', { TF_BUILD: 'True' }],
        ['AWS CodeBuild', { CODEBUILD_BUILD_ID: 'site:1' }],
        ['TeamCity', { TEAMCITY_VERSION: '2024.1' }],
      ] as const) {
        const run = await runCli(['-C', w.root, 'status', '--exit-code'], {
          ...w.env,
          CMS_SYNC_TOKEN: token,
          // Not set at all, as these services leave it.
          CI: undefined,
          ...marker,
        }).done
        const said = `${service}: ${run.code} ${run.stderr}`
        expect(
          heard.filter((h) => h.includes(token)),
          said,
        ).toEqual([])
        expect(run.code, said).toBe(2)
        expect(run.stderr, said).toContain('CMS_SYNC_SERVER')
      }
      expect(heard).toEqual([])
    } finally {
      await thief.close()
    }
  })

  test("a person's login never sends the password to a server a pulled commit named, in a workspace bound to another", async () => {
    const { w } = await committed()
    const thief = await startThief((req, body) => `${req.method} ${req.url} ${body}`)
    const { heard, url: host } = thief
    try {
      // A colleague's commit, pulled into a synced workspace: cms-sync.yaml and the lock's target
      // line name another host. The workspace's own state still names its server.
      await writeConfig(w.root, host, dialect)
      await retargetLock(w, host)
      const password = 'the-password-of-admin'
      // Not CI: a person's shell (their token expired, so they log in again).
      const { CMS_SYNC_TOKEN: _token, ...shell } = w.env
      const run = await runCli(
        ['-C', w.root, 'login', '--username', 'admin', '--password-stdin'],
        { ...shell, CMS_SYNC_TOKEN: undefined },
        `${password}\n`,
      ).done
      const said = `${run.code} ${run.stderr}${run.stdout}`
      expect(heard, said).toEqual([])
      expect(run.code, said).toBe(4)
      expect(run.stderr, said).toContain('bound to')
      // Their own server, named on the command line, is their word: that login goes there.
      const own = await runCli(
        ['-C', w.root, 'login', '--server', w.proxy.url, '--username', 'admin', '--password-stdin'],
        { ...shell, CMS_SYNC_TOKEN: undefined },
        'admin\n',
      ).done
      expect(own.code, own.stderr).toBe(0)
      expect(heard).toEqual([])
    } finally {
      await thief.close()
    }
  })

  test("a colleague's branch that commits .cms-sync/state/ rebinds nothing: checked out over the ignored state, it takes no token to its host", async () => {
    const { w, repo } = await committed()
    const thief = await startThief((req) => JSON.stringify(req.headers))
    const { heard, url: host } = thief
    try {
      // The colleague's branch: cms-sync.yaml, the lock's target line and a state, all naming
      // their host (the state forced past .gitignore).
      const own = {
        yaml: await readFile(w.file('cms-sync.yaml'), 'utf8'),
        lock: await readFile(w.file('cms-sync.lock'), 'utf8'),
        state: await readFile(w.file('.cms-sync/state/index.json'), 'utf8'),
      }
      git(repo, 'checkout', '-q', '-b', 'colleague')
      await writeConfig(w.root, host, dialect)
      await writeFile(w.file('cms-sync.lock'), own.lock.split(w.proxy.url).join(host))
      await writeFile(w.file('.cms-sync/state/index.json'), own.state.split(w.proxy.url).join(host))
      git(repo, 'add', '-A')
      git(repo, 'add', '-f', 'site/.cms-sync/state/index.json')
      git(repo, 'commit', '-q', '-m', 'colleague')
      // Back on main, the person's own state again (untracked, ignored), then the checkout.
      git(repo, 'checkout', '-q', 'main')
      await writeFile(w.file('.cms-sync/state/index.json'), own.state)
      expect(await readFile(w.file('cms-sync.yaml'), 'utf8')).toBe(own.yaml)
      git(repo, 'checkout', '-q', 'colleague')
      // A person's shell with the token exported (not CI), as the README allows.
      const token = w.env.CMS_SYNC_TOKEN!
      for (const args of [['status'], ['pull'], ['push']]) {
        const run = await runCli(['-C', w.root, ...args], { ...w.env, CMS_SYNC_TOKEN: token }).done
        const said = `${args.join(' ')}: ${run.code} ${run.stderr}`
        expect(
          heard.filter((h) => h.includes(token)),
          said,
        ).toEqual([])
        expect(run.code, said).toBe(2)
        expect(run.stderr, said).toContain('.cms-sync/state/index.json')
      }
      expect(heard).toEqual([])
    } finally {
      await thief.close()
    }
  })

  test('a reference as a title (a field anyone may read) is a secret leaf like any other: the push stops, the secret is neither published nor pulled into the repository', async () => {
    const w = await startWorld(dialect, { resources: ['connections'] })
    world = w
    await w.server.put('connection', 'site', gitConnection(SECRET))
    // The job declares the connection's secret under the name its file uses.
    const variable = 'CMS_SYNC_SECRET_SITE_DEPLOYER_PASSWORD'
    const env = { ...w.env, [variable]: SECRET }
    expect((await runCli(['-C', w.root, 'sync'], env).done).code).toBe(0)
    expect((await w.readJson('connections/site.json')).deployer).toMatchObject({
      password: `\${${variable}}`,
    })
    // The pull request: the same reference as the connection's title.
    await w.editJson('connections/site.json', { title: `\${${variable}}` })
    const run = await runCli(['-C', w.root, 'push'], env).done
    const said = `${run.code} ${run.stderr}${run.stdout}`
    expect((await w.server.get('connection', 'site'))?.title, said).toBe('Site')
    // The server's title is not the variable's value: a conflict of that leaf (exit 3), which
    // the job never settles for the pull request.
    expect(run.code, said).toBe(3)
    expect(run.stdout, said).toContain('/title')
    expect(`${run.stdout}${run.stderr}`.includes(SECRET)).toBe(false)
    expect(await secretsIn(w.root, [SECRET])).toEqual([])
  })
})
