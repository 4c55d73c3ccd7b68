// The CI recipe of the README (docs/ci/github-actions.yml), run as the CI service would run it:
// every `run:` step of the job the event starts, in bash with `-eo pipefail`, in a fresh git
// checkout of a real repository, with the job's and the step's `env:` (repository variables and
// secrets filled in as GitHub would), `$GITHUB_PATH` and `$RUNNER_TEMP`, and the emulator (the
// upstream dialect: anonymous reads, as the real server) as a child process. The install step
// runs too: it unpacks the tarball `npm pack` makes of this checkout, committed in the
// repository, after checking its pinned sha256. Steps that `uses:` an action are what the test
// does itself (the checkout), need nothing here (setup-node: this Node on PATH) or are checked
// for what they say (the trash artifact).

import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { parse } from 'yaml'
import { MAIN_JS } from '../helpers/build.js'
import { contentOf, SECTION_SCHEMA } from '../helpers/fixtures.js'

const PIPELINE = path.resolve(import.meta.dirname, '../../docs/ci/github-actions.yml')

interface Step {
  id: string
  if?: string
  run?: string
  uses?: string
  env?: Record<string, string>
  with?: Record<string, unknown>
}

interface Job {
  if?: string
  permissions?: Record<string, string>
  env?: Record<string, string>
  steps: Step[]
}

/** What the repository's settings hold: variables and secrets. */
interface Settings {
  vars: Record<string, string>
  secrets: Record<string, string>
}

/** A `${{ vars.X }}` or `${{ secrets.X }}` filled in from the settings; any other expression is refused. */
function expand(value: string, settings: Settings): string {
  return value.replace(
    /\$\{\{\s*(vars|secrets)\.([A-Z0-9_]+)\s*\}\}/g,
    (_all, kind: 'vars' | 'secrets', name) => {
      return settings[kind][name] ?? ''
    },
  )
}

function envOf(block: Record<string, string> | undefined, settings: Settings): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(block ?? {})) {
    const expanded = expand(String(value), settings)
    if (expanded.includes('${{')) throw new Error(`the test cannot evaluate ${name}: ${value}`)
    out[name] = expanded
  }
  return out
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=dev@example.invalid', '-c', 'user.name=dev', ...args], {
    cwd,
    stdio: 'pipe',
  }).toString()

/** The `if:` conditions the recipe uses: `github.event_name == '<event>'`, and `always()`. */
function applies(condition: string | undefined, event: string): boolean {
  if (condition === undefined || condition === 'always()') return true
  const match = condition.match(/^github\.event_name == '([a-z_]+)'$/)
  if (!match) throw new Error(`the test cannot evaluate the condition ${condition}`)
  return match[1] === event
}

// Each job starts the CLI several times as a process: slow on a loaded 2-core machine.
describe('the CI recipe (docs/ci/github-actions.yml) against the emulator', { timeout: 120_000 }, () => {
  let emulator: ChildProcess
  let url: string
  let token: string
  let base: string
  let origin: string
  let jobs: Record<string, Job>
  /** The sha256 of the committed tarball: what the user writes into CMS_SYNC_SHA256. */
  let tarballHash: string
  /** The repository's settings as the recipe asks for them. */
  const settings = (): Settings => ({
    vars: { CMS_SYNC_SERVER: url, CMS_SYNC_PROJECT: 'demo', CMS_SYNC_ENVIRONMENT: 'live' },
    secrets: { CMS_SYNC_TOKEN: token },
  })

  async function api(method: string, route: string, body?: unknown): Promise<Response> {
    // A new connection each time: a job runs synchronously and blocks this event loop past the
    // server's keep-alive, so a pooled connection would be found closed only when reused.
    return fetch(`${url}${route}`, {
      method,
      headers: {
        connection: 'close',
        authorization: `Bearer ${token}`,
        cookie: `token=${token}`,
        'content-type': 'application/json',
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  }

  const serverTitle = async (id: string) =>
    ((await (await api('GET', `/api/demo/live/content/${id}`)).json()) as { properties: { title: string } })
      .properties.title

  /**
   * The job the event starts, on `branch`: a fresh checkout, then each step, with the job's and
   * the step's env as GitHub sets them. `sha256` stands for what the recipe's CMS_SYNC_SHA256 holds.
   */
  function runJob(
    event: 'push' | 'pull_request',
    branch: string,
    name: string,
    opts: { sha256?: string } = {},
  ) {
    const [jobName, job] = Object.entries(jobs).find(([, j]) => applies(j.if, event))!
    const checkout = path.join(base, name)
    // As actions/checkout does: one commit deep unless the recipe asks for more (0: all history).
    const depth = Number(job.steps.find((step) => step.id === 'checkout')?.with?.['fetch-depth'] ?? 1)
    const deepen = depth > 0 ? ['--depth', String(depth)] : []
    git(base, 'clone', '-q', ...deepen, '--branch', branch, `file://${origin}`, checkout)
    const runnerTemp = path.join(base, `${name}-runner-temp`)
    const githubPath = path.join(runnerTemp, 'github-path')
    const jobEnv = envOf(job.env, settings())
    jobEnv.CMS_SYNC_SHA256 = opts.sha256 ?? tarballHash
    let added: string[] = []
    let output = ''
    for (const step of job.steps) {
      if (step.uses !== undefined || !applies(step.if, event)) continue
      const env = {
        // setup-node: this Node; nothing else of this machine's PATH but the system's tools.
        PATH: [...added, path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
        HOME: base,
        XDG_CONFIG_HOME: path.join(base, 'xdg-ci'),
        CI: 'true',
        GITHUB_ACTIONS: 'true',
        GITHUB_EVENT_NAME: event,
        GITHUB_REF_NAME: branch,
        GITHUB_PATH: githubPath,
        RUNNER_TEMP: runnerTemp,
        NO_COLOR: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        ...jobEnv,
        ...envOf(step.env, settings()),
      }
      execFileSync('mkdir', ['-p', runnerTemp])
      const result = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], {
        cwd: checkout,
        env,
        encoding: 'utf8',
        timeout: 60_000,
      })
      output += `$ ${step.id}\n${result.stdout}${result.stderr}`
      if (result.status !== 0)
        return { ok: false, job: jobName, failedStep: step.id, code: result.status, output, checkout }
      // What a step appends to $GITHUB_PATH is on PATH for the steps after it.
      added = spawnSync('cat', [githubPath], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean)
        .reverse()
    }
    return { ok: true, job: jobName, failedStep: undefined, code: 0, output, checkout }
  }

  beforeAll(async () => {
    jobs = (parse(await readFile(PIPELINE, 'utf8')) as { jobs: Record<string, Job> }).jobs
    base = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-ci-'))
    // The tarball the recipe installs, made as its header says (`npm pack` of a built checkout).
    const packed = path.join(base, 'packed')
    await mkdir(packed)
    execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', packed], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      stdio: 'pipe',
    })
    const [tarball] = await readdir(packed)
    expect(tarball).toBe('cms-sync-0.1.0.tgz')
    const tarballBytes = await readFile(path.join(packed, tarball!))
    tarballHash = createHash('sha256').update(tarballBytes).digest('hex')
    // The emulator, as a child process of the built CLI
    emulator = spawn(process.execPath, [MAIN_JS, 'emulator', '--port', '0', '--dialect', 'upstream'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    url = await new Promise<string>((resolve, reject) => {
      let seen = ''
      emulator.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString()
        const match = seen.match(/listening on (http:\/\/\S+)/)
        if (match) resolve(match[1]!)
      })
      emulator.once('exit', (code) => reject(new Error(`the emulator exited with ${code}: ${seen}`)))
    })
    const login = await fetch(`${url}/api/user/login?persist=false`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'admin' }),
    })
    token = (await login.text()).trim()
    expect(login.status).toBe(200)
    await api('POST', '/api/demo/live/schemas/section?create=true', SECTION_SCHEMA)
    for (const id of ['home', 'contact', 'about'])
      await api('POST', `/api/demo/live/content/${id}?create=true`, contentOf(id))
    // A developer's workspace, committed to the origin repository
    origin = path.join(base, 'origin.git')
    git(base, 'init', '-q', '--bare', '-b', 'main', origin)
    const dev = path.join(base, 'dev')
    const cms = (...args: string[]) =>
      execFileSync(process.execPath, [MAIN_JS, ...args], { env: { ...process.env, CMS_SYNC_TOKEN: token } })
    cms('init', dev, '--server', url, '--project', 'demo', '--environment', 'live')
    cms('-C', dev, 'pull')
    await mkdir(path.join(dev, 'tools'))
    await writeFile(path.join(dev, 'tools', 'cms-sync-0.1.0.tgz'), tarballBytes)
    git(dev, 'init', '-q', '-b', 'main')
    git(dev, 'add', '.')
    git(dev, 'commit', '-qm', 'the site')
    git(dev, 'remote', 'add', 'origin', origin)
    git(dev, 'push', '-q', 'origin', 'main')
  }, 60_000)

  afterAll(async () => {
    emulator?.kill('SIGTERM')
  })

  /** A branch of origin/main with `title` written into content/<id>.json. */
  async function branchWithEdit(name: string, id: string, title: string): Promise<void> {
    const work = path.join(base, `edit-${name}`)
    git(base, 'clone', '-q', origin, work)
    git(work, 'checkout', '-q', '-b', name)
    const file = path.join(work, 'content', `${id}.json`)
    const value = JSON.parse(await readFile(file, 'utf8'))
    await writeFile(file, `${JSON.stringify({ ...value, properties: { title } }, null, 2)}\n`)
    git(work, 'commit', '-qam', `edit ${id}`)
    git(work, 'push', '-q', 'origin', name)
  }

  function mergeToMain(branch: string): void {
    const work = path.join(base, `merge-${branch}`)
    git(base, 'clone', '-q', origin, work)
    git(work, 'merge', '-q', '--no-edit', `origin/${branch}`)
    git(work, 'push', '-q', 'origin', 'main')
  }

  test('a pull request is checked, the merge pushes the edit and commits the lock back', async () => {
    await branchWithEdit('contact-edit', 'contact', 'edited in a pull request')
    const check = runJob('pull_request', 'contact-edit', 'pr-1')
    expect(check.ok, check.output).toBe(true)
    expect(check.output).toContain('these changes go to the server when this is merged')
    expect(await serverTitle('contact')).toBe('contact')
    mergeToMain('contact-edit')
    const main = runJob('push', 'main', 'main-1')
    expect(main.ok, main.output).toBe(true)
    expect(await serverTitle('contact')).toBe('edited in a pull request')
    // The lock came back to main in a commit of its own, and a new checkout is clean
    const log = git(main.checkout, 'log', '--format=%s', '-2', 'origin/main')
    expect(log.split('\n')[0]).toBe('cms-sync: lock after push [skip ci]')
    expect(git(main.checkout, 'show', '--name-only', '--format=', 'origin/main').trim()).toBe('cms-sync.lock')
    const again = runJob('pull_request', 'main', 'check-main')
    expect(again.ok, again.output).toBe(true)
    expect(again.output).toContain('the workspace and the server agree')
  })

  test('a pull request that drops .gitignore never gets .cms-sync/ committed to main by the push job', async () => {
    const work = path.join(base, 'edit-ignore')
    git(base, 'clone', '-q', origin, work)
    git(work, 'checkout', '-q', '-b', 'no-ignore')
    await rm(path.join(work, '.gitignore'))
    const file = path.join(work, 'content', 'contact.json')
    const value = JSON.parse(await readFile(file, 'utf8'))
    await writeFile(file, `${JSON.stringify({ ...value, properties: { title: 'no ignore' } }, null, 2)}\n`)
    git(work, 'commit', '-qam', 'tidy up')
    git(work, 'push', '-q', 'origin', 'no-ignore')
    mergeToMain('no-ignore')
    const main = runJob('push', 'main', 'main-no-ignore')
    expect(main.ok, main.output).toBe(true)
    expect(await serverTitle('contact')).toBe('no ignore')
    // The commit back holds the lock, never the job's own state, logs or trash: committed, they
    // would stop every later run (a committed .cms-sync/ is refused) and publish the trash.
    const tree = git(main.checkout, 'ls-tree', '-r', '--name-only', 'origin/main').split('\n')
    expect(tree.filter((name) => name.startsWith('.cms-sync/'))).toEqual([])
    expect(git(main.checkout, 'show', '--name-only', '--format=', 'origin/main').trim()).toBe('cms-sync.lock')
    const next = runJob('push', 'main', 'main-after-no-ignore')
    expect(next.ok, next.output).toBe(true)
  })

  test("an editor's change on the server fails the check and the push, and stays", async () => {
    await branchWithEdit('home-edit', 'home', 'developer')
    await api('POST', '/api/demo/live/content/home?create=true', {
      ...contentOf('home'),
      properties: { title: 'editor' },
    })
    const check = runJob('pull_request', 'home-edit', 'pr-2')
    expect(check).toMatchObject({ ok: false, failedStep: 'check', code: 3 })
    mergeToMain('home-edit')
    const main = runJob('push', 'main', 'main-2')
    expect(main).toMatchObject({ ok: false, failedStep: 'push', code: 3 })
    expect(main.output).toContain('conflict')
    expect(await serverTitle('home')).toBe('editor')
  })

  test('a file the push would refuse fails the pull request check (exit 1)', async () => {
    const work = path.join(base, 'edit-broken')
    git(base, 'clone', '-q', origin, work)
    git(work, 'checkout', '-q', '-b', 'broken')
    await writeFile(path.join(work, 'content', 'broken.json'), '{ "id": "broken", ')
    git(work, 'add', '.')
    git(work, 'commit', '-qm', 'broken')
    git(work, 'push', '-q', 'origin', 'broken')
    const check = runJob('pull_request', 'broken', 'pr-3')
    expect(check).toMatchObject({ ok: false, failedStep: 'check', code: 1 })
    expect(check.output).toContain('invalid JSON')
  })

  test('the recipe installs only the committed, pinned tarball, and gives a pull request no secret', async () => {
    const text = await readFile(PIPELINE, 'utf8')
    const recipe = parse(text) as { on: Record<string, unknown>; permissions: unknown }
    // Triggers: a pull request's own files never run with the secrets.
    expect(Object.keys(recipe.on).sort()).toEqual(['pull_request', 'push'])
    expect(text).not.toMatch(/^\s*(pull_request_target|workflow_run):/m)
    expect(recipe.permissions).toEqual({})
    // No package by name from a registry: the install step unpacks tools/, after the sha256 check.
    const install = (job: Job) => job.steps.find((step) => step.id === 'install')!.run!
    for (const job of Object.values(jobs)) {
      expect(install(job)).not.toMatch(/npm (install|i|ci|exec)\b|npx /)
      expect(install(job)).toMatch(/sha256sum --check/)
    }
    const check = jobs.check!
    expect(check.permissions).toEqual({ contents: 'read' })
    const checkText = JSON.stringify(check)
    expect(checkText).not.toContain('secrets.')
    expect(check.steps.find((step) => step.id === 'check')!.run).toContain('--anonymous')
    // The push job: the token in the push step only, and the trash kept as an artifact.
    const push = jobs.push!
    expect(JSON.stringify(push.env)).not.toContain('secrets.')
    const withToken = push.steps.filter((step) =>
      JSON.stringify(step.env ?? {}).includes('secrets.CMS_SYNC_TOKEN'),
    )
    expect(withToken.map((step) => step.id)).toEqual(['push'])
    const trash = push.steps.find((step) => step.uses?.startsWith('actions/upload-artifact@'))
    expect(trash).toMatchObject({ if: 'always()', with: { path: '.cms-sync/trash/' } })
    // The check job ran without any token (the first test), and a changed tarball stops the install.
    const tampered = runJob('pull_request', 'main', 'tampered', { sha256: '0'.repeat(64) })
    expect(tampered).toMatchObject({ ok: false, failedStep: 'install' })
    expect(tampered.output).toMatch(/FAILED/)
  })

  test('a pull request that points cms-sync.yaml at its own server fails the check before any request', async () => {
    const work = path.join(base, 'edit-server')
    git(base, 'clone', '-q', origin, work)
    git(work, 'checkout', '-q', '-b', 'server')
    const config = await readFile(path.join(work, 'cms-sync.yaml'), 'utf8')
    await writeFile(path.join(work, 'cms-sync.yaml'), config.replace(url, 'http://127.0.0.1:9'))
    git(work, 'commit', '-qam', 'another server')
    git(work, 'push', '-q', 'origin', 'server')
    const check = runJob('pull_request', 'server', 'pr-server')
    expect(check).toMatchObject({ ok: false, failedStep: 'check', code: 4 })
    expect(check.output).toContain('CMS_SYNC_SERVER names')
  })

  test('the checkout has the history a merge needs: a pull request and an editor on other fields merge', async () => {
    // The conflict a test before left on main is settled on the server's side first
    await api('POST', '/api/demo/live/content/home?create=true', {
      ...contentOf('home'),
      properties: { title: 'developer' },
    })
    await branchWithEdit('about-edit', 'about', 'about, by a pull request')
    // An editor changes another field of the same item on the server meanwhile
    await api('POST', '/api/demo/live/content/about?create=true', { ...contentOf('about'), sort: 7 })
    const check = runJob('pull_request', 'about-edit', 'pr-4')
    expect(check.ok, check.output).toBe(true)
    expect(check.output).toContain('these changes go to the server when this is merged')
    mergeToMain('about-edit')
    const main = runJob('push', 'main', 'main-4')
    expect(main.ok, main.output).toBe(true)
    const about = (await (await api('GET', '/api/demo/live/content/about')).json()) as {
      sort: number
      properties: { title: string }
    }
    expect(about).toMatchObject({ sort: 7, properties: { title: 'about, by a pull request' } })
  })
})
