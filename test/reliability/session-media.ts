// The media part of a session (session.ts): files created, their bytes edited, renamed, moved
// to another folder and deleted, on either side, with a model of path -> sha256 of the bytes and
// the set of every version ever written (a file holding anything else is torn). The checks read
// the server's listing and bytes, the files under media/ and media.yaml.

import { createHash } from 'node:crypto'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect } from 'vitest'
import { joinRel, splitRel } from '../../src/engine/media/media-match.js'
import { createMediaApi, type MediaApi, type RemoteMedia } from '../../src/remote/media.js'
import { parseMediaIndex } from '../../src/workspace/media-index.js'
import type { Side, Sides } from './session.js'
import { bytesUnder, type seeded } from './support.js'

const FOLDERS = ['', 'img', 'docs/deep']
/** Never delete below this many media: the delete guard stops at half of a kind. */
const KEEP = 5

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

export class MediaSession {
  /** media path (relative to media/) -> sha256 of the bytes that must be there. */
  readonly model = new Map<string, string>()
  /** Every version either side ever wrote: a file with other bytes is torn. */
  readonly versions = new Set<string>()
  readonly api: MediaApi
  private readonly scratch: string

  constructor(
    readonly world: Sides,
    private readonly random: ReturnType<typeof seeded>,
    readonly dialect: 'spec' | 'upstream',
  ) {
    this.api = createMediaApi(world.server)
    this.scratch = path.join(path.dirname(world.file('')), 'media-scratch')
  }

  /** Some bytes of any value 0-255, a few KB, unique per serial. */
  private bytes(serial: number, side: Side): Buffer {
    const body = Buffer.from(Array.from({ length: 200 + this.random.int(3000) }, () => this.random.int(256)))
    const bytes = Buffer.concat([Buffer.from(`media ${serial} ${side}\n`), body])
    this.versions.add(sha256(bytes))
    return bytes
  }

  private async idOf(rel: string): Promise<string> {
    const found = (await this.api.list()).find((m) => joinRel(m.folder, m.name) === rel)
    if (!found) throw new Error(`the session lost track of media ${rel}`)
    return found.id
  }

  private async scratchFile(bytes: Buffer): Promise<string> {
    await mkdir(this.scratch, { recursive: true })
    const file = path.join(this.scratch, `${sha256(bytes)}.bin`)
    await writeFile(file, bytes)
    return file
  }

  /** A new file; returns its path and key (the id for a remote create, else the path). */
  async create(side: Side, serial: number): Promise<{ rel: string; key: string }> {
    const rel = joinRel(this.random.pick(FOLDERS), `m${serial}-${side}.txt`)
    const bytes = this.bytes(serial, side)
    this.model.set(rel, sha256(bytes))
    if (side === 'local') {
      await mkdir(path.dirname(this.world.file(`media/${rel}`)), { recursive: true })
      await writeFile(this.world.file(`media/${rel}`), bytes)
      return { rel, key: rel }
    }
    const { folder, name } = splitRel(rel)
    const { id } = await this.api.upload({ path: await this.scratchFile(bytes), size: bytes.length, name })
    if (folder !== '') await this.api.move(id, folder)
    return { rel, key: id }
  }

  /** One random media edit of a path no other edit of this round touched; undefined when none fits. */
  async step(
    side: Side,
    serial: number,
    busy: Set<string>,
    deleted: Set<string>,
  ): Promise<{ op: string; key: string } | undefined> {
    const free = [...this.model.keys()].filter((rel) => !busy.has(`media:${rel}`))
    const roll = this.random.next()
    if (free.length === 0 || roll < 0.25) {
      const { rel, key } = await this.create(side, serial)
      busy.add(`media:${rel}`)
      return { op: 'create', key }
    }
    const rel = this.random.pick(free)
    const { folder, name } = splitRel(rel)
    busy.add(`media:${rel}`)
    const id = side === 'remote' ? await this.idOf(rel) : rel
    let op: string
    let to = rel
    if (roll < 0.5) {
      op = 'bytes edit'
      const bytes = this.bytes(serial, side)
      // Upstream has no revision: new bytes under the same name are not seen without --checksum
      // (docs/media.md), so its other client changes the bytes together with the name.
      if (side === 'remote' && this.dialect === 'upstream') to = joinRel(folder, `m${serial}-remote.txt`)
      if (side === 'local') await writeFile(this.world.file(`media/${rel}`), bytes)
      else
        await this.api.upload(
          { path: await this.scratchFile(bytes), size: bytes.length, name: splitRel(to).name },
          id,
        )
      this.model.delete(rel)
      this.model.set(to, sha256(bytes))
    } else if (roll < 0.85) {
      const move = roll < 0.67
      op = move ? 'move' : 'rename'
      to = move
        ? joinRel(this.random.pick(FOLDERS.filter((f) => f !== folder)), name)
        : joinRel(folder, `m${serial}-${side}.txt`)
      if (side === 'local') {
        await mkdir(path.dirname(this.world.file(`media/${to}`)), { recursive: true })
        await rename(this.world.file(`media/${rel}`), this.world.file(`media/${to}`))
      } else if (move) await this.api.move(id, splitRel(to).folder)
      else await this.api.rename(id, splitRel(to).name)
      this.model.set(to, this.model.get(rel)!)
      this.model.delete(rel)
    } else if (this.model.size > KEEP && !deleted.has('media')) {
      op = 'delete'
      deleted.add('media')
      if (side === 'local') await rm(this.world.file(`media/${rel}`))
      else await this.api.remove(id)
      this.model.delete(rel)
    } else return undefined
    busy.add(`media:${to}`)
    return { op, key: id }
  }

  /** path -> sha256 of what the server serves, with the ids. */
  async server(): Promise<{ bytes: Map<string, string>; ids: Map<string, string>; listed: RemoteMedia[] }> {
    const listed = await this.api.list()
    const bytes = new Map<string, string>()
    const ids = new Map<string, string>()
    await mkdir(this.scratch, { recursive: true })
    for (const item of listed) {
      const rel = joinRel(item.folder, item.name)
      const { sha256: hash } = await this.api.download(item.id, path.join(this.scratch, 'download'))
      bytes.set(rel, hash)
      ids.set(rel, item.id)
    }
    return { bytes, ids, listed }
  }

  /** Files under media/: path -> sha256. */
  async local(): Promise<Map<string, string>> {
    const out = new Map<string, string>()
    for (const [rel, bytes] of await bytesUnder(this.world.file('media'))) out.set(rel, sha256(bytes))
    return out
  }

  /** Files under media/ whose bytes are no version anyone wrote (torn), and a media.yaml that does not parse. */
  async torn(): Promise<string[]> {
    const out: string[] = []
    for (const [rel, hash] of await this.local()) if (!this.versions.has(hash)) out.push(`media/${rel}`)
    const index = await readFile(this.world.file('media.yaml'), 'utf8').catch(() => undefined)
    if (index !== undefined) {
      try {
        parseMediaIndex(index)
      } catch {
        out.push('media.yaml')
      }
    }
    return out
  }

  async expectConverged(): Promise<{ lost: number; extra: number }> {
    const expected = Object.fromEntries(this.model)
    const server = await this.server()
    const lost = [...this.model].filter(([rel, hash]) => server.bytes.get(rel) !== hash).length
    const extra = server.listed.length - (this.model.size - lost)
    expect(Object.fromEntries(server.bytes), 'media on the server').toEqual(expected)
    expect(server.listed.length, 'media items on the server').toBe(this.model.size)
    expect(Object.fromEntries(await this.local()), 'media files').toEqual(expected)
    // media.yaml names every file with the id the server holds it under.
    const index = parseMediaIndex(await readFile(this.world.file('media.yaml'), 'utf8'))
    expect(Object.fromEntries(index), 'media.yaml').toEqual(Object.fromEntries(server.ids))
    return { lost, extra }
  }
}
