// An editing session with an independent model of what must end up where: random content and
// schema edits, creates and deletes on both sides (disjoint per round, so no conflicts), with
// the last value of every item kept in the model, and the final checks against server and files.

import { readdir, readFile } from 'node:fs/promises'
import { expect } from 'vitest'
import { schemaCodec } from '../../src/workspace/schema-codec.js'
import { contentFile } from '../helpers/fixtures.js'
import { contentOf, SECTION_SCHEMA, type World } from '../helpers/sync-world.js'

/** What a session needs of a world: the other client, and the workspace files. */
export type Sides = Pick<World, 'server' | 'writeJson' | 'remove' | 'file'>

import { seeded } from './support.js'

export type Side = 'local' | 'remote'

export interface Model {
  /** content id -> title */
  content: Map<string, string>
  /** custom schema id -> name */
  schemas: Map<string, string>
}

export interface EditCounts {
  edits: number
  byKind: Record<string, number>
}

export function schemaFileOf(id: string, name: string): Record<string, unknown> {
  return schemaCodec.toFile({ ...SECTION_SCHEMA, id, name })
}

export class Session {
  readonly model: Model = { content: new Map(), schemas: new Map([['section', SECTION_SCHEMA.name]]) }
  readonly counts: EditCounts = { edits: 0, byKind: {} }
  private serial = 0
  private readonly random

  constructor(
    readonly world: Sides,
    seed: number,
  ) {
    this.random = seeded(seed)
  }

  /** Takes the world's seeded content into the model (call after the first sync). */
  async adopt(): Promise<void> {
    for (const item of await this.world.server.list('content'))
      this.model.content.set(String(item.id), String((item.properties as { title: string }).title))
  }

  private count(what: string): void {
    this.counts.edits++
    this.counts.byKind[what] = (this.counts.byKind[what] ?? 0) + 1
  }

  /** `n` edits split over both sides, never two on one item in a round; returns the touched ids per side. */
  async round(n: number, sides: Side[] = ['local', 'remote']): Promise<Record<Side, Set<string>>> {
    const touched: Record<Side, Set<string>> = { local: new Set(), remote: new Set() }
    const busy = new Set<string>()
    for (let i = 0; i < n; i++) {
      const side = this.random.pick(sides)
      const roll = this.random.next()
      const free = [...this.model.content.keys()].filter((id) => !busy.has(id))
      const value = `${side}-${++this.serial}`
      // Creates and edits outnumber deletes, so the set stays large enough for the delete guard.
      if (roll < 0.55 && free.length > 0) {
        const id = this.random.pick(free)
        await this.setContent(side, id, value)
        this.count(`${side} content edit`)
        busy.add(id)
        touched[side].add(id)
      } else if (roll < 0.8 || free.length < 12) {
        const id = `item-${this.serial}-${side}`
        await this.setContent(side, id, value)
        this.count(`${side} content create`)
        busy.add(id)
        touched[side].add(id)
      } else if (roll < 0.9) {
        const id = this.random.pick(free)
        await this.removeContent(side, id)
        this.count(`${side} content delete`)
        busy.add(id)
        touched[side].add(id)
      } else {
        const schemaIds = [...this.model.schemas.keys()].filter((id) => !busy.has(`schema:${id}`))
        const id =
          this.random.next() < 0.5 && schemaIds.length > 0
            ? this.random.pick(schemaIds)
            : `kind-${this.serial}`
        await this.setSchema(side, id, `Schema ${value}`)
        this.count(`${side} schema ${this.model.schemas.has(id) ? 'edit' : 'create'}`)
        busy.add(`schema:${id}`)
        touched[side].add(`schema:${id}`)
      }
    }
    return touched
  }

  async setContent(side: Side, id: string, title: string): Promise<void> {
    if (side === 'local')
      await this.world.writeJson(`content/${id}.json`, contentFile(id, { properties: { title } }))
    else {
      const current = (await this.world.server.get('content', id)) ?? contentOf(id)
      await this.world.server.put('content', id, { ...current, properties: { title } })
    }
    this.model.content.set(id, title)
  }

  async removeContent(side: Side, id: string): Promise<void> {
    if (side === 'local') await this.world.remove(`content/${id}.json`)
    else await this.world.server.remove('content', id)
    this.model.content.delete(id)
  }

  async setSchema(side: Side, id: string, name: string): Promise<void> {
    if (side === 'local') await this.world.writeJson(`schemas/${id}.json`, schemaFileOf(id, name))
    else {
      const current = (await this.world.server.get('schema', id)) ?? { ...SECTION_SCHEMA, id }
      await this.world.server.put('schema', id, { ...current, name })
    }
    this.model.schemas.set(id, name)
  }

  /** The server and the workspace files both hold exactly the model: nothing lost, nothing extra. */
  async expectConverged(): Promise<{ lost: number; extra: number }> {
    const serverContent = new Map(
      (await this.world.server.list('content')).map((c) => [
        String(c.id),
        (c.properties as { title: string }).title,
      ]),
    )
    const serverSchemas = new Map(
      (await this.world.server.list('schema')).map((s) => [String(s.id), String(s.name)]),
    )
    const localContent = new Map<string, string>()
    for (const name of await readdir(this.world.file('content'))) {
      const file = JSON.parse(await readFile(this.world.file(`content/${name}`), 'utf8'))
      localContent.set(file.id, file.properties.title)
    }
    const localSchemas = new Map<string, string>()
    for (const name of await readdir(this.world.file('schemas'))) {
      const file = JSON.parse(await readFile(this.world.file(`schemas/${name}`), 'utf8'))
      localSchemas.set(file.id, file.name)
    }
    const expected = Object.fromEntries(this.model.content)
    const lost = [...this.model.content.keys()].filter(
      (id) => serverContent.get(id) !== this.model.content.get(id),
    )
    const extra = [...serverContent.keys()].filter((id) => !this.model.content.has(id))
    expect(Object.fromEntries(serverContent)).toEqual(expected)
    expect(Object.fromEntries(localContent)).toEqual(expected)
    expect(Object.fromEntries(serverSchemas)).toEqual(Object.fromEntries(this.model.schemas))
    expect(Object.fromEntries(localSchemas)).toEqual(Object.fromEntries(this.model.schemas))
    return { lost: lost.length, extra: extra.length }
  }
}
