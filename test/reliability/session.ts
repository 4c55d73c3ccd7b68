// An editing session with an independent model of what must end up where: random edits,
// creates and deletes of content, schemas, forms, connections and media on both sides (disjoint
// per round, so no conflicts), the last value of every item kept in the model, and the final
// checks against server and files (media.yaml and media bytes included, session-media.ts).

import { readdir, readFile } from 'node:fs/promises'
import { expect } from 'vitest'
import { schemaCodec } from '../../src/workspace/schema-codec.js'
import { contentFile } from '../helpers/fixtures.js'
import { contentOf, SECTION_SCHEMA, type World } from '../helpers/sync-world.js'
import { MediaSession } from './session-media.js'
import { seeded } from './support.js'

/** What a session needs of a world: the other client, and the workspace files. */
export type Sides = Pick<World, 'server' | 'writeJson' | 'remove' | 'file'>

export type Side = 'local' | 'remote'
export type JsonKind = 'content' | 'schema' | 'form' | 'connection'

/** Every connection's secret on the server; files hold `${CMS_SYNC_SECRET_DEPLOY_PW}` instead. */
export const SECRET_VAR = 'CMS_SYNC_SECRET_DEPLOY_PW'
export const SECRET = 'reliability-s3cret-7f41c09b'
export const SESSION_ENV = { [SECRET_VAR]: SECRET }

const FOLDER: Record<JsonKind, string> = {
  content: 'content',
  schema: 'schemas',
  form: 'forms',
  connection: 'connections',
}

const FORM = {
  title: '',
  allowedOrigin: '',
  redirect: '',
  appendRedirect: false,
  inputs: { name: { type: 'text' } },
}

function connection(id: string, title: string, password: string): Record<string, unknown> {
  return {
    id,
    title,
    url: 'https://example.test',
    processor: { alias: 'json' },
    deployer: { alias: 'git', username: 'deploy', password, repo: 'https://git.test/r.git', branch: 'main' },
  }
}

export function schemaFileOf(id: string, name: string): Record<string, unknown> {
  return schemaCodec.toFile({ ...SECTION_SCHEMA, id, name })
}

/** The value a session edits: a content's title, a schema's name, a form's or connection's title. */
function editedValue(kind: JsonKind, item: Record<string, unknown>): string {
  if (kind === 'content') return String((item.properties as { title: string }).title)
  return String(kind === 'schema' ? item.name : item.title)
}

function fileOf(kind: JsonKind, id: string, value: string): Record<string, unknown> {
  if (kind === 'content') return contentFile(id, { properties: { title: value } })
  if (kind === 'schema') return schemaFileOf(id, value)
  if (kind === 'form') return { ...FORM, id, title: value }
  return connection(id, value, `\${${SECRET_VAR}}`)
}

function remoteOf(kind: JsonKind, id: string, value: string, current: Record<string, unknown> | undefined) {
  if (kind === 'content') return { ...(current ?? contentOf(id)), properties: { title: value } }
  if (kind === 'schema') return { ...(current ?? { ...SECTION_SCHEMA, id }), name: value }
  if (kind === 'form') return { ...(current ?? { ...FORM, id }), title: value }
  return { ...(current ?? connection(id, value, SECRET)), title: value }
}

export interface EditCounts {
  edits: number
  byKind: Record<string, number>
}

/** Never delete below this many items of a kind: the delete guard stops at half of a kind. */
const KEEP = { content: 12, schema: 99, form: 4, connection: 4 }

export class Session {
  readonly model: Record<JsonKind, Map<string, string>> = {
    content: new Map(),
    schema: new Map([['section', SECTION_SCHEMA.name]]),
    form: new Map(),
    connection: new Map(),
  }
  readonly counts: EditCounts = { edits: 0, byKind: {} }
  readonly media: MediaSession
  private serial = 0
  private readonly random

  constructor(
    readonly world: Sides,
    seed: number,
    readonly dialect: 'spec' | 'upstream',
  ) {
    this.random = seeded(seed)
    this.media = new MediaSession(world, this.random, dialect)
  }

  /** Puts the starting items on the server (the first sync pulls them) and into the model. */
  async seed(content: number): Promise<void> {
    for (let i = 0; i < content; i++) await this.set('remote', 'content', `page-${i}`, `page-${i}`)
    for (let i = 0; i < 5; i++) await this.set('remote', 'form', `form-${i}`, `Form ${i}`)
    for (let i = 0; i < 5; i++) await this.set('remote', 'connection', `conn-${i}`, `Connection ${i}`)
    for (let i = 0; i < 6; i++) await this.media.create('remote', ++this.serial)
  }

  private count(what: string): void {
    this.counts.edits++
    this.counts.byKind[what] = (this.counts.byKind[what] ?? 0) + 1
  }

  /** `n` edits split over both sides and kinds, never two on one item in a round; the touched keys per side. */
  async round(n: number, sides: Side[] = ['local', 'remote']): Promise<Record<Side, Set<string>>> {
    const touched: Record<Side, Set<string>> = { local: new Set(), remote: new Set() }
    const busy = new Set<string>()
    const deleted = new Set<string>()
    for (let i = 0; i < n; i++) {
      const side = this.random.pick(sides)
      const serial = ++this.serial
      const pick = this.random.next()
      if (pick < 0.3) {
        const done = await this.media.step(side, serial, busy, deleted)
        if (done) {
          this.count(`${side} media ${done.op}`)
          touched[side].add(`media:${done.key}`)
        }
        continue
      }
      const kind: JsonKind =
        pick < 0.65 ? 'content' : pick < 0.75 ? 'schema' : pick < 0.87 ? 'form' : 'connection'
      const model = this.model[kind]
      const free = [...model.keys()].filter((id) => !busy.has(`${kind}:${id}`))
      const roll = this.random.next()
      let id: string
      let op: string
      // Creates and edits outnumber deletes; one delete per kind and round keeps the guard quiet.
      if (roll < 0.55 && free.length > 0) {
        id = this.random.pick(free)
        op = 'edit'
        await this.set(side, kind, id, `${side}-${serial}`)
      } else if (roll < 0.85 || free.length <= KEEP[kind] || deleted.has(kind) || kind === 'schema') {
        id = `${kind === 'content' ? 'item' : kind}-${serial}-${side}`
        op = 'create'
        await this.set(side, kind, id, `${side}-${serial}`)
      } else {
        id = this.random.pick(free)
        op = 'delete'
        await this.removeItem(side, kind, id)
        deleted.add(kind)
      }
      this.count(`${side} ${kind} ${op}`)
      busy.add(`${kind}:${id}`)
      touched[side].add(`${kind}:${id}`)
    }
    return touched
  }

  async set(side: Side, kind: JsonKind, id: string, value: string): Promise<void> {
    if (side === 'local') await this.world.writeJson(`${FOLDER[kind]}/${id}.json`, fileOf(kind, id, value))
    else {
      const current = await this.world.server.get(kind, id)
      await this.world.server.put(kind, id, remoteOf(kind, id, value, current))
    }
    this.model[kind].set(id, value)
  }

  async removeItem(side: Side, kind: JsonKind, id: string): Promise<void> {
    if (side === 'local') await this.world.remove(`${FOLDER[kind]}/${id}.json`)
    else await this.world.server.remove(kind, id)
    this.model[kind].delete(id)
  }

  /** The server and the workspace files both hold exactly the model: nothing lost, nothing extra. */
  async expectConverged(): Promise<{ lost: number; extra: number }> {
    let lost = 0
    let extra = 0
    for (const kind of Object.keys(FOLDER) as JsonKind[]) {
      const expected = Object.fromEntries(this.model[kind])
      const server = new Map(
        (await this.world.server.list(kind)).map((item) => [String(item.id), editedValue(kind, item)]),
      )
      const local = new Map<string, string>()
      for (const name of await readdir(this.world.file(FOLDER[kind])).catch(() => [] as string[])) {
        const text = await readFile(this.world.file(`${FOLDER[kind]}/${name}`), 'utf8')
        const file = JSON.parse(text)
        local.set(file.id, editedValue(kind, file))
        // A connection file holds the reference, never the secret; the server holds the secret.
        if (kind === 'connection') expect(text, name).not.toContain(SECRET)
      }
      if (kind === 'connection')
        for (const item of await this.world.server.list('connection'))
          expect((item.deployer as { password?: string }).password, String(item.id)).toBe(SECRET)
      lost += [...this.model[kind]].filter(([id, value]) => server.get(id) !== value).length
      extra += [...server.keys()].filter((id) => !this.model[kind].has(id)).length
      expect(Object.fromEntries(server), `${kind} on the server`).toEqual(expected)
      expect(Object.fromEntries(local), `${kind} files`).toEqual(expected)
    }
    const media = await this.media.expectConverged()
    return { lost: lost + media.lost, extra: extra + media.extra }
  }
}
