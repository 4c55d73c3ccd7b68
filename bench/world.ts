// The benchmark's world: a generated seed workspace (schemas, content, media) loaded into the
// in-process emulator on loopback, and fresh workspaces bound to it. Generating files and
// seeding through --seed's own loader keeps every server-owned field as a real write sets it.

import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type Emulator, startEmulator } from '../src/emulator/index.js'
import { CLI } from './measure.js'

export interface Sizes {
  content: number
  schemas: number
  media: number
  /** Bytes per media file. */
  mediaBytes: number
}

export interface World {
  emulator: Emulator
  token: string
  /** Temp folder holding the seed and every workspace; removed by close(). */
  dir: string
  sizes: Sizes
  /** Where cms-sync children write a .cpuprofile each (--profile), if anywhere. */
  profileDir?: string
  close(): Promise<void>
}

const pad = (n: number) => String(n).padStart(6, '0')
export const schemaId = (i: number) => `schema-${pad(i)}`
export const contentId = (i: number) => `node-${pad(i)}`

function schemaFile(i: number): unknown {
  const id = schemaId(i)
  return {
    id,
    name: `Schema ${i}`,
    icon: 'file',
    type: 'content',
    parentSchemaId: 'page',
    hiddenProperties: [],
    defaultTabId: 'content',
    tabs: { content: 'Content' },
    fields: {
      properties: {
        title: { label: 'Title', schemaId: 'string', tabId: 'content' },
        body: { label: 'Body', schemaId: 'richText', tabId: 'content' },
      },
    },
    allowedAtRoot: true,
    allowedChildSchemas: [id],
  }
}

/** A tree two levels deep: the first 1/10 at the root, the rest children of one of them. */
function contentFile(i: number, sizes: Sizes): unknown {
  const roots = Math.max(1, Math.floor(sizes.content / 10))
  const parent = i < roots ? '' : contentId(i % roots)
  // A child shares its parent's schema, which allows itself as a child.
  const schema = schemaId((i < roots ? i : i % roots) % sizes.schemas)
  return {
    id: contentId(i),
    parentId: parent,
    schemaId: schema,
    sort: i,
    isPublished: i % 3 === 0,
    publishOn: null,
    unpublishOn: null,
    properties: { title: `Page ${i}`, body: `<p>${'Lorem ipsum dolor sit amet. '.repeat(12)}</p>` },
    settings: { publishing: { connectionId: '' } },
  }
}

async function writeAll(files: Array<[string, string | Buffer]>): Promise<void> {
  for (const dir of new Set(files.map(([file]) => path.dirname(file)))) await mkdir(dir, { recursive: true })
  for (let i = 0; i < files.length; i += 256)
    await Promise.all(files.slice(i, i + 256).map(([file, body]) => writeFile(file, body)))
}

async function generateSeed(seed: string, sizes: Sizes): Promise<void> {
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`
  const files: Array<[string, string | Buffer]> = []
  for (let i = 0; i < sizes.schemas; i++)
    files.push([path.join(seed, 'schemas', `${schemaId(i)}.json`), json(schemaFile(i))])
  for (let i = 0; i < sizes.content; i++)
    files.push([path.join(seed, 'content', `${contentId(i)}.json`), json(contentFile(i, sizes))])
  for (let i = 0; i < sizes.media; i++) {
    // Distinct bytes per file (a counter in the first bytes), 100 files per folder.
    const bytes = Buffer.alloc(sizes.mediaBytes, i % 251)
    bytes.writeUInt32BE(i, 0)
    files.push([path.join(seed, 'media', `folder-${Math.floor(i / 100)}`, `image-${pad(i)}.bin`), bytes])
  }
  await writeAll(files)
}

export async function createWorld(sizes: Sizes): Promise<World> {
  if (sizes.schemas < 1) throw new Error('--schemas must be at least 1: every content names a schema')
  const dir = await mkdtemp(path.join(tmpdir(), 'cms-sync-bench-'))
  const seed = path.join(dir, 'seed')
  await generateSeed(seed, sizes)
  const emulator = await startEmulator({ port: 0, dialect: 'spec', seedDir: seed })
  // The seed is in the emulator's memory now; its files would only take disk space.
  await rm(seed, { recursive: true, force: true })
  return {
    emulator,
    token: emulator.token(),
    dir,
    sizes,
    async close() {
      await emulator.close()
      // Retried: a process that wrote into a workspace (git) may still be finishing there.
      await rm(dir, { recursive: true, force: true, maxRetries: 5 })
    },
  }
}

/** A new, empty workspace folder bound to the world's emulator. */
export async function createWorkspace(
  world: World,
  name: string,
  opts: { resources: string[]; requestsPerSecond: number; concurrency: number },
): Promise<string> {
  const root = path.join(world.dir, name)
  await mkdir(root, { recursive: true })
  await writeFile(
    path.join(root, 'cms-sync.yaml'),
    [
      `server: ${world.emulator.url}`,
      'project: demo',
      'environment: live',
      `resources: [${opts.resources.join(', ')}]`,
      `rateLimit: { requestsPerSecond: ${opts.requestsPerSecond}, concurrency: ${opts.concurrency} }`,
      'dialect: spec',
      // The bench measures sync against baselines that deploy nothing; its published items name
      // no connection, so under `auto` every push of one would also be a failing publish.
      'publishing: manual',
      '',
    ].join('\n'),
  )
  await writeFile(path.join(root, '.gitignore'), '.cms-sync/\n')
  return root
}

/**
 * What a child process needs: the token with the target it belongs to (in CI a token is sent only
 * to the target the environment names), and a config home of its own. Without
 * NODE_EXTRA_CA_CERTS: a machine that sets it (a proxy's CA bundle) makes every Node process
 * parse that bundle before its first line runs, 0.14 s on the machine of docs/benchmarks.md.
 * The emulator is plain HTTP on loopback, so the bundle is never used; it would only add to
 * each Node side a cost of the machine. The bench reports Node's start with and without it.
 */
export function childEnv(world: World): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _machineSetting, ...env } = process.env
  return {
    ...env,
    CMS_SYNC_TOKEN: world.token,
    CMS_SYNC_SERVER: world.emulator.url,
    CMS_SYNC_PROJECT: 'demo',
    CMS_SYNC_ENVIRONMENT: 'live',
    XDG_CONFIG_HOME: path.join(world.dir, 'xdg'),
  }
}

/** The node arguments that run the built cms-sync CLI, with a CPU profile per run under --profile. */
export function cliArgs(world: World, ...args: string[]): string[] {
  const profile = world.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${world.profileDir}`] : []
  return [...profile, CLI, ...args]
}

/** The listings cms-sync reads for the bench's resources (schemas, content, media; spec dialect). */
export function listingUrls(world: World): string[] {
  const api = `${world.emulator.url}/api/demo/live`
  return ['schemas', 'content', 'media'].map((segment) => `${api}/${segment}`)
}

/** The floors of status and of a one-file push are curl lines: without curl they cannot run. */
export function requireCurl(floor: string): void {
  const found = (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => existsSync(path.join(dir, 'curl')))
  if (!found) throw new Error(`${floor} runs curl, which is not on PATH here: install curl to measure it`)
}
