// What every file of the upstream contract suite needs: a fresh project on the real server,
// the server's side read straight over HTTP (never through cms-sync's own client, so a bug
// there cannot hide itself), workspaces driven by the built CLI as a child process, and the
// damage check run after each step.

import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, inject } from 'vitest'
import { MAIN_JS } from '../helpers/build.js'
import { contentFile, SECTION_SCHEMA } from '../helpers/fixtures.js'
import { setWatchConfig, watchProcess } from '../helpers/watch.js'
import { REPO } from './where.js'

/** The example workspace: a realistic small site to seed a project with. */
export const REPO_EXAMPLE = path.join(REPO, 'example-workspace')

/** The setup script, or '' when the suite is skipped (no shared folder). */
export const SETUP = inject('upstreamSetup')

export interface Upstream {
  url: string
  project: string
  environment: string
  user: string
  pass: string
  /** A persistent token of the admin user. */
  token: string
  /** The admin user's id (what createdBy/updatedBy hold). */
  userId: string
  /** Everything under /api/<project>/<environment>. */
  api: Api
}

/** Makes a project of its own on the running server (setup.sh with UP_PROJECT_NAME; ~1 s). */
export async function freshProject(label: string): Promise<Upstream> {
  const name = `cms-sync-${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`
  const out = await setupProject(name)
  const vars = Object.fromEntries(
    [...out.matchAll(/^export (UP_\w+)=(.*)$/gm)].map((m) => [m[1], m[2]] as [string, string]),
  )
  const url = vars.UP_URL!
  const login = await fetch(`${url}/api/user/login?persist=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: vars.UP_USER, password: vars.UP_PASS }),
  })
  const token = (await login.text()).trim()
  if (login.status !== 200 || !/^[0-9a-f]{40}$/.test(token))
    throw new Error(`login on ${url} failed: ${login.status} ${token}`)
  const api = new Api(url, vars.UP_PROJECT!, vars.UP_ENV!, token)
  const me = (await (await fetch(`${url}/api/user`, { headers: { cookie: `token=${token}` } })).json()) as {
    id: string
  }
  return {
    url,
    project: vars.UP_PROJECT!,
    environment: vars.UP_ENV!,
    user: vars.UP_USER!,
    pass: vars.UP_PASS!,
    token,
    userId: me.id,
    api,
  }
}

/** setup.sh for one project; tried again when the shared server fails a request under load. */
async function setupProject(name: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return execFileSync('bash', [SETUP], {
        env: { ...process.env, UP_PROJECT_NAME: name },
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
        timeout: 600_000,
      })
    } catch (error) {
      if (attempt === 3) throw error
      await new Promise((resolve) => setTimeout(resolve, 2000))
    }
  }
}

export type Item = Record<string, unknown> & { id: string }
export const SEGMENTS = ['schemas', 'content', 'forms', 'connections', 'media'] as const
export type Segment = (typeof SEGMENTS)[number]

/** Raw calls to the server, with the token as the cookie it reads everywhere. */
export class Api {
  constructor(
    readonly url: string,
    readonly project: string,
    readonly environment: string,
    readonly token: string,
  ) {}

  get base(): string {
    return `${this.url}/api/${this.project}/${this.environment}`
  }

  async call(method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${this.base}/${route}`, {
      method,
      headers: {
        cookie: `token=${this.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      redirect: 'manual',
    })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {}
    return { status: res.status, body: parsed }
  }

  async ok(method: string, route: string, body?: unknown): Promise<unknown> {
    const res = await this.call(method, route, body)
    if (res.status < 200 || res.status >= 300)
      throw new Error(`${method} ${route} -> ${res.status}: ${JSON.stringify(res.body)}`)
    return res.body
  }

  async list(segment: Segment): Promise<Item[]> {
    const body = await this.ok('GET', segment)
    if (!Array.isArray(body)) throw new Error(`GET ${segment} is not an array: ${JSON.stringify(body)}`)
    return body as Item[]
  }

  /** One item by id (content by id carries its schedule dates; the listing does not). */
  async get(segment: Exclude<Segment, 'media'>, id: string): Promise<Item> {
    return (await this.ok('GET', `${segment}/${encodeURIComponent(id)}`)) as Item
  }

  /** A full-document create or replace, as the server's own UI sends it. */
  async put(segment: Exclude<Segment, 'media'>, item: Item): Promise<void> {
    await this.ok('POST', `${segment}/${encodeURIComponent(item.id)}?create=true`, item)
  }

  async remove(segment: Exclude<Segment, 'media'>, id: string): Promise<void> {
    await this.ok('DELETE', `${segment}/${encodeURIComponent(id)}`)
  }

  /** The bytes of a media item, as a browser reads them. */
  async mediaBytes(id: string): Promise<Buffer> {
    const res = await fetch(`${this.url}/media/${this.project}/${this.environment}/${id}`)
    if (res.status !== 200) throw new Error(`GET media ${id} -> ${res.status}: ${await res.text()}`)
    return Buffer.from(await res.arrayBuffer())
  }
}

// ---------------------------------------------------------------------------------------------
// The server side before and after a step: what must not change, and no duplicates.

/** Fields the server changes on its own (reads, heartbeats, locks): never a sign of damage. */
const VOLATILE = new Set(['viewedBy', 'viewedOn', 'isLocked', 'sync'])

function stable(item: Item): string {
  return JSON.stringify(item, (key, value) => (VOLATILE.has(key) ? undefined : value))
}

export type ServerState = Record<Segment, Map<string, Item>>

/** Every listing of the project; a listing with an id twice fails the test there and then. */
export async function serverState(api: Api): Promise<ServerState> {
  const state = {} as ServerState
  for (const segment of SEGMENTS) {
    const items = await api.list(segment)
    const ids = items.map((item) => item.id)
    const twice = ids.filter((id, i) => ids.indexOf(id) !== i)
    expect(twice, `${segment} listed twice on the server`).toEqual([])
    state[segment] = new Map(items.map((item) => [item.id, item]))
  }
  return state
}

/**
 * The damage check after a step: every item the step was not meant to touch is on the server
 * exactly as before (same fields, values, key order, dates, authorship), and the step added and
 * removed exactly the items it names (`content/a`, `media/<id>`). Returns the new state.
 */
export async function expectOnly(
  api: Api,
  before: ServerState,
  step: { changed?: string[]; added?: string[]; removed?: string[] } = {},
): Promise<ServerState> {
  const after = await serverState(api)
  const changed = new Set(step.changed ?? [])
  for (const segment of SEGMENTS) {
    const was = before[segment]
    const now = after[segment]
    const added = [...now.keys()].filter((id) => !was.has(id)).map((id) => `${segment}/${id}`)
    const removed = [...was.keys()].filter((id) => !now.has(id)).map((id) => `${segment}/${id}`)
    expect(added.sort(), `${segment} added on the server`).toEqual(
      (step.added ?? []).filter((p) => p.startsWith(`${segment}/`)).sort(),
    )
    expect(removed.sort(), `${segment} removed on the server`).toEqual(
      (step.removed ?? []).filter((p) => p.startsWith(`${segment}/`)).sort(),
    )
    for (const [id, item] of was) {
      const key = `${segment}/${id}`
      const later = now.get(id)
      if (!later || changed.has(key)) continue
      expect(stable(later), `${key} changed on the server`).toBe(stable(item))
    }
  }
  return after
}

// ---------------------------------------------------------------------------------------------
// Workspaces driven by the built CLI.

export interface CliResult {
  code: number
  stdout: string
  stderr: string
  json: unknown
}

export class Workspace {
  constructor(
    readonly root: string,
    readonly env: NodeJS.ProcessEnv,
  ) {}

  /** `node dist/cli/main.js -C <root> ...args`, to its end. */
  cli(...args: string[]): Promise<CliResult> {
    return runCli(['-C', this.root, ...args], this.env)
  }

  /** A command that must succeed (exit 0); its --json output when it gave one. */
  async ok(...args: string[]): Promise<CliResult> {
    const result = await this.cli(...args)
    expect(result.code, `cms-sync ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0)
    return result
  }

  /** `status --json` must say clean. */
  async expectClean(): Promise<void> {
    const status = await this.ok('--json', 'status')
    expect(status.json, status.stdout).toMatchObject({ clean: true, changes: [] })
  }

  async readJson(rel: string): Promise<Record<string, unknown>> {
    return JSON.parse(await readFile(path.join(this.root, rel), 'utf8'))
  }

  async writeJson(rel: string, value: unknown): Promise<void> {
    await this.write(rel, `${JSON.stringify(value, null, 2)}\n`)
  }

  async write(rel: string, data: string | Buffer): Promise<void> {
    await mkdir(path.dirname(path.join(this.root, rel)), { recursive: true })
    await writeFile(path.join(this.root, rel), data)
  }

  /** The workspace's synced files (not .cms-sync/, cms-sync.yaml, .gitignore), sorted. */
  async files(): Promise<string[]> {
    const found: string[] = []
    const walk = async (dir: string) => {
      for (const entry of await readdir(path.join(this.root, dir), { withFileTypes: true })) {
        const rel = dir ? `${dir}/${entry.name}` : entry.name
        if (rel === '.cms-sync' || rel === '.git') continue
        if (entry.isDirectory()) await walk(rel)
        else if (rel.includes('/')) found.push(rel)
      }
    }
    await walk('')
    return found.sort()
  }

  async read(rel: string): Promise<Buffer> {
    return readFile(path.join(this.root, rel))
  }

  /** git in the workspace, with a fixed author (CI has none configured). */
  git(...args: string[]): string {
    return execFileSync('git', args, {
      cwd: this.root,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'cms-sync test',
        GIT_AUTHOR_EMAIL: 'test@cms-sync.invalid',
        GIT_COMMITTER_NAME: 'cms-sync test',
        GIT_COMMITTER_EMAIL: 'test@cms-sync.invalid',
      },
    })
  }
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN_JS, ...args],
      { env: { ...process.env, ...env, NO_COLOR: '1' }, cwd, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        let json: unknown
        try {
          json = JSON.parse(stdout)
        } catch {}
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ code, stdout, stderr, json })
      },
    )
  })
}

const temps: string[] = []

/** A temp folder removed by cleanupTemps(). */
export async function tempDir(label: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), `cms-sync-up-${label}-`))
  temps.push(dir)
  return dir
}

export async function cleanupTemps(): Promise<void> {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true })
}

/**
 * `cms-sync init` + the token in CMS_SYNC_TOKEN (as CI runs it), in a new temp folder; the
 * credentials file lives in a temp XDG_CONFIG_HOME, never the user's.
 */
export async function initWorkspace(up: Upstream, label: string, extraEnv: NodeJS.ProcessEnv = {}) {
  const parent = await tempDir(label)
  const root = path.join(parent, 'ws')
  const env = { XDG_CONFIG_HOME: path.join(parent, 'xdg'), CMS_SYNC_TOKEN: up.token, ...extraEnv }
  const init = await runCli(
    ['init', root, '--server', up.url, '--project', up.project, '--environment', up.environment],
    env,
  )
  expect(init.code, init.stderr).toBe(0)
  return new Workspace(root, env)
}

/** The section schema, and a page content/<id>.json for each id with its title, written in `ws`. */
export async function writeSectionPages(ws: Workspace, titles: Record<string, string>): Promise<void> {
  await ws.writeJson('schemas/section.json', SECTION_SCHEMA)
  for (const [id, title] of Object.entries(titles))
    await ws.writeJson(`content/${id}.json`, contentFile(id, { properties: { title } }))
}

export type WatchDaemon = ReturnType<typeof watchProcess>

/**
 * `cms-sync watch` as a real process on `ws`, once it has reconciled; with `watch`, that is the
 * config's watch mapping first (else the config is as it is).
 */
export async function startWatching(
  ws: Workspace,
  watch?: { debounceMs: number; pollSeconds: number },
): Promise<WatchDaemon> {
  if (watch) await setWatchConfig(ws.root, watch)
  const daemon = watchProcess(ws.root, { ...process.env, ...ws.env, NO_COLOR: '1' })
  await daemon.waitForEvent({ event: 'reconciled' }, 60_000)
  return daemon
}

/** A suite's end: its daemon stopped, then its temp folders removed. */
export async function stopWatchingAndClean(daemon: WatchDaemon | undefined): Promise<void> {
  await daemon?.stop()
  await cleanupTemps()
}
