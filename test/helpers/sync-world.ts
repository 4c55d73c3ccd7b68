// Given-helpers for end-to-end tests: a real emulator on a free port (behind a counting
// proxy), a real temp workspace, the real CLI run in-process, and a second real client playing
// "someone else editing on the server".

import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { run } from '../../src/cli/program.js'
import { type Emulator, startEmulator } from '../../src/emulator/index.js'
import { createRemoteClient, type RemoteClient } from '../../src/remote/index.js'
import { type CountingProxy, startCountingProxy } from './counting-proxy.js'
import { contentOf, SECTION_SCHEMA } from './fixtures.js'

export type Dialect = 'spec' | 'upstream'

export interface CliRun {
  exitCode: number
  stdout: string
  stderr: string
  // biome-ignore lint/suspicious/noExplicitAny: test convenience for parsed --json output
  json: any
}

export { contentOf, SECTION_SCHEMA } from './fixtures.js'

export class World {
  constructor(
    readonly emulator: Emulator,
    readonly proxy: CountingProxy,
    readonly server: RemoteClient,
    readonly root: string,
  ) {}

  get env(): NodeJS.ProcessEnv {
    return { CMS_SYNC_TOKEN: this.emulator.token(), XDG_CONFIG_HOME: path.join(this.root, '..', 'xdg') }
  }

  /** Runs `cms-sync -C <workspace> ...args` in-process. */
  async cli(...args: string[]): Promise<CliRun> {
    return this.cliIn(this.root, ...args)
  }

  async cliIn(dir: string, ...args: string[]): Promise<CliRun> {
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    const out: Buffer[] = []
    const err: Buffer[] = []
    stdout.on('data', (b: Buffer) => out.push(b))
    stderr.on('data', (b: Buffer) => err.push(b))
    const exitCode = await run(['-C', dir, ...args], {
      stdout,
      stderr,
      env: this.env,
      cwd: dir,
      stopSignal: new Promise(() => {}),
    })
    const text = Buffer.concat(out).toString()
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { exitCode, stdout: text, stderr: Buffer.concat(err).toString(), json }
  }

  file(rel: string): string {
    return path.join(this.root, ...rel.split('/'))
  }

  async readJson(rel: string): Promise<Record<string, unknown>> {
    return JSON.parse(await readFile(this.file(rel), 'utf8'))
  }

  async writeJson(rel: string, value: unknown): Promise<void> {
    await mkdir(path.dirname(this.file(rel)), { recursive: true })
    await writeFile(this.file(rel), `${JSON.stringify(value, null, 2)}\n`)
  }

  async editJson(rel: string, change: Record<string, unknown>): Promise<void> {
    await this.writeJson(rel, { ...(await this.readJson(rel)), ...change })
  }

  async remove(rel: string): Promise<void> {
    await rm(this.file(rel))
  }

  async exists(rel: string): Promise<boolean> {
    return stat(this.file(rel)).then(
      () => true,
      () => false,
    )
  }

  /** Every workspace file outside .cms-sync/ with its bytes, for before/after comparisons. */
  async tree(): Promise<Record<string, string>> {
    const out: Record<string, string> = {}
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        if (entry.name === '.cms-sync' || entry.name === '.git') continue
        const full = path.join(dir, entry.name)
        if (entry.isDirectory()) await walk(full)
        else out[path.relative(this.root, full).split(path.sep).join('/')] = await readFile(full, 'utf8')
      }
    }
    await walk(this.root)
    return out
  }

  async mtimes(): Promise<Record<string, number>> {
    const out: Record<string, number> = {}
    for (const rel of Object.keys(await this.tree())) out[rel] = (await stat(this.file(rel))).mtimeMs
    return out
  }

  /** Server state as plain data: every schema and content, without volatile fields. */
  async serverState(): Promise<Record<string, unknown>> {
    const strip = ({ updateDate: _u, viewedOn: _v, ...rest }: Record<string, unknown>) => rest
    const schemas = (await this.server.list('schema')).map(strip)
    const content = (await this.server.list('content')).map(strip)
    const byId = (items: Record<string, unknown>[]) => Object.fromEntries(items.map((i) => [i.id, i]))
    return { schemas: byId(schemas), content: byId(content) }
  }

  async setContent(id: string, props: Record<string, unknown>): Promise<void> {
    const current = (await this.server.get('content', id)) ?? contentOf(id)
    await this.server.put('content', id, { ...current, ...props, id })
  }

  async close(): Promise<void> {
    await this.server.close()
    await this.proxy.close()
    await this.emulator.close()
  }
}

export async function startWorld(
  dialect: Dialect,
  opts: { content?: string[]; seedDir?: string } = {},
): Promise<World> {
  const emulator = await startEmulator({
    port: 0,
    dialect,
    ...(opts.seedDir ? { seedDir: opts.seedDir } : {}),
  })
  const proxy = await startCountingProxy(emulator.url)
  const server = await createRemoteClient({
    server: emulator.url,
    project: 'demo',
    environment: 'live',
    token: emulator.token(),
    dialect,
    rateLimit: { requestsPerSecond: 1000, concurrency: 4 },
  })
  if (!opts.seedDir) await server.put('schema', 'section', SECTION_SCHEMA)
  for (const id of opts.seedDir ? [] : (opts.content ?? ['home', 'news', 'contact', 'shop']))
    await server.put('content', id, contentOf(id))
  const base = await mkdtemp(path.join(tmpdir(), 'cms-sync-e2e-'))
  const root = path.join(base, 'site')
  await mkdir(root)
  await writeConfig(root, proxy.url, dialect)
  return new World(emulator, proxy, server, root)
}

/**
 * A world whose project inherits from a second emulator (the parent), as the server's own Sync
 * feature links them (upstream §9). The workspace mirrors content only: an upstream server with
 * sync on disables its own sync the moment schemas are listed.
 */
export async function inheritingWorld(
  dialect: Dialect,
  opts: { parentContent?: string[] } = {},
): Promise<{ world: World; parent: Emulator; parentClient: RemoteClient }> {
  const parent = await startEmulator({ port: 0, dialect })
  const parentClient = await createRemoteClient({
    server: parent.url,
    project: 'demo',
    environment: 'live',
    token: parent.token(),
    dialect,
    rateLimit: { requestsPerSecond: 1000, concurrency: 4 },
  })
  await parentClient.put('schema', 'section', SECTION_SCHEMA)
  for (const id of opts.parentContent ?? ['inherited-page'])
    await parentClient.put('content', id, contentOf(id, { properties: { title: `${id} from the parent` } }))
  const world = await startWorld(dialect, { content: ['home'] })
  await writeConfig(world.root, world.proxy.url, dialect, ['content'])
  const link = await world.server.request('POST', '/api/demo/settings/sync', {
    body: { enabled: true, url: parent.url, token: parent.token(), project: 'demo' },
  })
  if (link.status !== 200) throw new Error(`could not link the child to the parent: ${link.status}`)
  const close = world.close.bind(world)
  world.close = async () => {
    await close()
    await parentClient.close()
    await parent.close()
  }
  return { world, parent, parentClient }
}

/** A world whose workspace has had one successful sync. */
export async function syncedWorld(dialect: Dialect): Promise<World> {
  const world = await startWorld(dialect)
  const first = await world.cli('sync')
  if (first.exitCode !== 0) throw new Error(`the first sync failed: ${first.stderr}`)
  return world
}

export async function writeConfig(
  root: string,
  server: string,
  dialect: Dialect,
  resources: readonly string[] = ['schemas', 'content'],
): Promise<void> {
  await writeFile(
    path.join(root, 'cms-sync.yaml'),
    [
      `server: ${server}`,
      'project: demo',
      'environment: live',
      `resources: [${resources.join(', ')}]`,
      'rateLimit: { requestsPerSecond: 1000, concurrency: 4 }',
      `dialect: ${dialect}`,
      '',
    ].join('\n'),
  )
}
