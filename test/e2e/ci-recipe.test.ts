// The CI recipe of the README (docs/ci/github-actions.yml), run as the CI service would run it:
// every `run:` step of the pipeline file, in bash with `-eo pipefail`, in a fresh git checkout
// of a real repository, with the built CLI (dist/) on PATH, the token from the environment (the
// secret), and the emulator as a child process. Steps that `uses:` an action are what the test
// does itself (the checkout) or need nothing here (setup-node: this Node; install: the build).

import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
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
  with?: Record<string, unknown>
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=dev@example.invalid', '-c', 'user.name=dev', ...args], {
    cwd,
    stdio: 'pipe',
  }).toString()

/** The `if:` conditions the recipe uses: `github.event_name == '<event>'`. */
function applies(step: Step, event: string): boolean {
  if (step.if === undefined) return true
  const match = step.if.match(/^github\.event_name == '([a-z_]+)'$/)
  if (!match) throw new Error(`the test cannot evaluate the condition ${step.if}`)
  return match[1] === event
}

// Each job starts the CLI several times as a process: slow on a loaded 2-core machine.
describe('the CI recipe (docs/ci/github-actions.yml) against the emulator', { timeout: 120_000 }, () => {
  let emulator: ChildProcess
  let url: string
  let token: string
  let base: string
  let origin: string
  let bin: string
  let steps: Step[]

  async function api(method: string, route: string, body?: unknown): Promise<Response> {
    return fetch(`${url}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  }

  const serverTitle = async (id: string) =>
    ((await (await api('GET', `/api/demo/live/content/${id}`)).json()) as { properties: { title: string } })
      .properties.title

  /** One job of the pipeline for a push or a pull request on `branch`: a fresh checkout, then each step. */
  function runJob(event: 'push' | 'pull_request', branch: string, name: string) {
    const checkout = path.join(base, name)
    // As actions/checkout does: one commit deep unless the recipe asks for more (0: all history).
    const depth = Number(steps.find((step) => step.id === 'checkout')?.with?.['fetch-depth'] ?? 1)
    const deepen = depth > 0 ? ['--depth', String(depth)] : []
    git(base, 'clone', '-q', ...deepen, '--branch', branch, `file://${origin}`, checkout)
    const env = {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: base,
      XDG_CONFIG_HOME: path.join(base, 'xdg-ci'),
      CMS_SYNC_TOKEN: token,
      GITHUB_EVENT_NAME: event,
      GITHUB_REF_NAME: branch,
      NO_COLOR: '1',
      GIT_CONFIG_NOSYSTEM: '1',
    }
    let output = ''
    for (const step of steps) {
      if (step.uses !== undefined || step.id === 'install' || !applies(step, event)) continue
      const result = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], {
        cwd: checkout,
        env,
        encoding: 'utf8',
        timeout: 60_000,
      })
      output += `$ ${step.id}\n${result.stdout}${result.stderr}`
      if (result.status !== 0)
        return { ok: false, failedStep: step.id, code: result.status, output, checkout }
    }
    return { ok: true, failedStep: undefined, code: 0, output, checkout }
  }

  beforeAll(async () => {
    steps = (parse(await readFile(PIPELINE, 'utf8')) as { jobs: Record<string, { steps: Step[] }> }).jobs[
      'cms-sync'
    ]!.steps
    base = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-ci-'))
    // `cms-sync` on PATH is the built CLI, as `npm install --global` would make it.
    bin = path.join(base, 'bin')
    await mkdir(bin)
    await writeFile(path.join(bin, 'cms-sync'), `#!/bin/sh\nexec "${process.execPath}" "${MAIN_JS}" "$@"\n`)
    await chmod(path.join(bin, 'cms-sync'), 0o755)
    // The emulator, as a child process of the built CLI
    emulator = spawn(process.execPath, [MAIN_JS, 'emulator', '--port', '0'], {
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

  test('the checkout has the history a merge needs: a pull request and an editor on other fields merge', async () => {
    // The conflict the test before left on main is settled on the server's side first
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
