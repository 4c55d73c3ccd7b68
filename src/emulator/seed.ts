// --seed WORKSPACE: loads a workspace folder (docs/api-dialects.md, "Workspace file format")
// into one project/environment, through the same builders a write uses, so server-owned
// fields come out as a real write would set them.

import fs from 'node:fs'
import path from 'node:path'
import YAML from 'yaml'
import { decodeId, decodeMediaName } from '../workspace/file-names.js'
import type { Core, Ctx } from './context.js'
import { isObj, newId, type Obj } from './entities.js'
import { Projects } from './projects.js'
import { buildConnection } from './routes/connections.js'
import { buildContent, persistContent } from './routes/content-model.js'
import { buildForm } from './routes/forms.js'
import { storeMedia } from './routes/media.js'
import { col } from './routes/resource.js'
import { buildSchema } from './routes/schemas.js'

export class SeedError extends Error {}

function readItems(dir: string): Array<{ file: string; id: string; body: Obj }> {
  if (!fs.existsSync(dir)) return []
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => {
      const file = path.join(dir, name)
      const id = decodeId(name.slice(0, -'.json'.length))
      if (id === undefined) throw new SeedError(`${file}: the file name is not an encoded id`)
      let body: unknown
      try {
        body = JSON.parse(fs.readFileSync(file, 'utf8'))
      } catch (error) {
        throw new SeedError(`${file}: not valid JSON: ${(error as Error).message}`)
      }
      if (!isObj(body)) throw new SeedError(`${file}: expected a JSON object`)
      if (body.id !== undefined && body.id !== id) {
        throw new SeedError(
          `${file}: its "id" ${JSON.stringify(body.id)} does not match the file name (id "${id}")`,
        )
      }
      return { file, id, body: { ...body, id } }
    })
}

/** `${ENV_VAR}` references become the variable's value when it is set, else stay as they are. */
function resolveSecrets(value: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string')
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (ref, name: string) => env[name] ?? ref)
  if (Array.isArray(value)) return value.map((v) => resolveSecrets(v, env))
  if (isObj(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveSecrets(v, env)]))
  return value
}

/** Parents before children, so every content write finds its parent as the server requires. */
function parentsFirst(items: Array<{ file: string; id: string; body: Obj }>) {
  const byId = new Map(items.map((i) => [i.id, i]))
  const out: typeof items = []
  const placed = new Set<string>()
  const visit = (item: (typeof items)[number], seen: Set<string>) => {
    if (placed.has(item.id) || seen.has(item.id)) return
    seen.add(item.id)
    const parent = typeof item.body.parentId === 'string' ? byId.get(item.body.parentId) : undefined
    if (parent) visit(parent, seen)
    placed.add(item.id)
    out.push(item)
  }
  for (const item of items) visit(item, new Set())
  return out
}

/** Language codes used by multilingual values, so the project's languages cover the content. */
function languagesIn(value: unknown, found: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const v of value) languagesIn(v, found)
  else if (isObj(value)) {
    if (value._multilingual === true)
      for (const key of Object.keys(value)) if (key !== '_multilingual') found.add(key)
    for (const v of Object.values(value)) languagesIn(v, found)
  }
  return found
}

function walk(dir: string, prefix = ''): string[] {
  if (!fs.existsSync(dir)) return []
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name
      if (entry.name.startsWith('.')) return []
      if (entry.isDirectory()) return walk(path.join(dir, entry.name), rel)
      return entry.isFile() ? [rel] : []
    })
}

export async function seedWorkspace(
  core: Core,
  dir: string,
  project: string,
  environment: string,
): Promise<string> {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw new SeedError(`seed workspace ${dir} is not a folder`)
  const admin = core.users.list().find((u) => u.isAdmin) ?? core.users.list()[0]
  const userId = admin?.id ?? ''
  // The builders take a request context; seeding is a write by the first admin.
  const ctx = { core, d: core.d, project, environment, params: {}, user: admin } as unknown as Ctx
  const counts = { schemas: 0, content: 0, forms: 0, connections: 0, media: 0 }
  const wrap = <T>(file: string, run: () => T): T => {
    try {
      return run()
    } catch (error) {
      throw new SeedError(`${file}: ${(error as Error).message}`)
    }
  }

  const schemas = readItems(path.join(dir, 'schemas'))
  for (const { file, id, body } of schemas) {
    wrap(file, () => core.store.put(col(ctx, 'schemas'), id, buildSchema(ctx, body)))
    counts.schemas++
  }
  const contentItems = readItems(path.join(dir, 'content'))
  const languages = languagesIn(
    contentItems.map((i) => i.body.properties),
    new Set(),
  )
  if (languages.size > 0) {
    const projects = new Projects(core.store)
    const current = projects.settings(project).languages
    const merged = new Set([...(Array.isArray(current) ? (current as string[]) : []), ...languages])
    projects.setSettings(project, 'project', 'languages', [...merged].sort())
  }
  for (const { file, id, body } of parentsFirst(contentItems)) {
    wrap(file, () => {
      const content = buildContent(ctx, body, id, undefined, userId)
      core.store.put(col(ctx, 'content'), id, persistContent(ctx, content, userId))
    })
    counts.content++
  }
  for (const { file, id, body } of readItems(path.join(dir, 'forms'))) {
    wrap(file, () => core.store.put(col(ctx, 'forms'), id, buildForm(ctx, body, id)))
    counts.forms++
  }
  for (const { file, id, body } of readItems(path.join(dir, 'connections'))) {
    wrap(file, () =>
      core.store.put(
        col(ctx, 'connections'),
        id,
        buildConnection(ctx, resolveSecrets(body, process.env) as Obj, id),
      ),
    )
    counts.connections++
  }

  const indexFile = path.join(dir, 'media.yaml')
  let index: Record<string, unknown> = {}
  if (fs.existsSync(indexFile)) {
    const parsed: unknown = wrap(indexFile, () => YAML.parse(fs.readFileSync(indexFile, 'utf8')))
    if (parsed !== null && !isObj(parsed))
      throw new SeedError(`${indexFile}: expected a mapping of media path to id`)
    index = parsed ?? {}
  }
  for (const rel of walk(path.join(dir, 'media'))) {
    const known = index[rel]
    const id = typeof known === 'string' && known !== '' ? known : newId()
    const slash = rel.lastIndexOf('/')
    // File names stand for media names as cms-sync writes them (file-names.ts).
    const name = decodeMediaName(rel.slice(slash + 1))
    storeMedia(ctx, id, name, fs.readFileSync(path.join(dir, 'media', rel)))
    const folder = rel.slice(0, Math.max(slash, 0)).split('/').map(decodeMediaName).join('/')
    if (slash >= 0) core.store.put(col(ctx, 'tree'), id, { id, folder: `/${folder}/` })
    counts.media++
  }
  const summary = Object.entries(counts)
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ')
  return `seeded ${project}/${environment} from ${dir}: ${summary}`
}
