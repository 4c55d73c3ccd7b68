// The emulator's whole state: named collections of JSON records in insertion order (the
// "natural order" the upstream database lists in), plus media bytes. Every change is one
// Op, so the same code path serves live writes, journal replay and snapshots.

import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { Readable } from 'node:stream'
import { DataDir, type Op } from './persistence.js'

// A separator no project id, environment name or kind can hold in practice, so a project's
// collections share a prefix and dropping a project is one prefix operation.
const SEP = '\u0000'

export const names = {
  projects: 'projects',
  users: 'users',
  tokens: 'tokens',
  config: 'config',
  tasks: 'tasks',
  settings: (project: string) => `${project}${SEP}settings`,
  env: (project: string, environment: string, kind: EnvKind) => `${project}${SEP}${environment}${SEP}${kind}`,
  envPrefix: (project: string, environment: string) => `${project}${SEP}${environment}${SEP}`,
  projectPrefix: (project: string) => `${project}${SEP}`,
  /** Upstream's media cache folder (`storage/<project>/cache`): one per project, no environment. */
  mediaCache: (project: string) => `${project}${SEP}media-cache`,
  taskKey: (project: string, environment: string, content: string, type: string) =>
    [project, environment, content, type].join(SEP),
}

export type EnvKind = 'content' | 'schemas' | 'connections' | 'forms' | 'media' | 'tree'
export const ENV_KINDS: EnvKind[] = ['content', 'schemas', 'connections', 'forms', 'media', 'tree']

type Json = unknown

export class Store {
  private readonly collections = new Map<string, Map<string, Json>>()
  private readonly memoryBlobs = new Map<string, Buffer>()
  private blobCounter = 0
  /** Writes per collection name since this store was opened (a dropped one keeps counting). */
  private readonly versions = new Map<string, number>()
  /**
   * Differs for each opened store: versions count from 0 again after a restart, so a version
   * alone could name two different contents of one collection.
   */
  readonly epoch = randomBytes(8).toString('hex')

  private constructor(private readonly disk: DataDir | undefined) {}

  static inMemory(): Store {
    return new Store(undefined)
  }

  /** Opens (or creates) a data folder, replays it and compacts it into a fresh snapshot. */
  static open(dir: string, compactAtBytes?: number): Store {
    const store = new Store(new DataDir(dir, compactAtBytes))
    store.disk!.load(
      (collections) => {
        for (const [name, entries] of Object.entries(collections))
          store.collections.set(name, new Map(entries))
      },
      (op) => store.apply(op),
    )
    store.compact()
    return store
  }

  get persistent(): boolean {
    return this.disk !== undefined
  }

  get dataDir(): string | undefined {
    return this.disk?.dir
  }

  isEmpty(): boolean {
    return this.collections.size === 0
  }

  get<T = Json>(collection: string, key: string): T | undefined {
    const value = this.collections.get(collection)?.get(key)
    return value === undefined ? undefined : (structuredClone(value) as T)
  }

  has(collection: string, key: string): boolean {
    return this.collections.get(collection)?.has(key) ?? false
  }

  list<T = Json>(collection: string): T[] {
    return [...(this.collections.get(collection)?.values() ?? [])].map((v) => structuredClone(v) as T)
  }

  /** Stored values without copying, for read-only scans over large collections. */
  peek(collection: string): Iterable<Json> {
    return this.collections.get(collection)?.values() ?? ([] as Json[])
  }

  keys(collection: string): string[] {
    return [...(this.collections.get(collection)?.keys() ?? [])]
  }

  /** How many writes this collection has had since the store was opened: any write is a new one. */
  version(collection: string): number {
    return this.versions.get(collection) ?? 0
  }

  collectionNames(): string[] {
    return [...this.collections.keys()]
  }

  put(collection: string, key: string, value: Json): void {
    // Stored values are detached copies, so a handler can never change state behind the journal.
    this.commit({ t: 'put', c: collection, k: key, v: JSON.parse(JSON.stringify(value)) })
  }

  del(collection: string, key: string): void {
    if (this.has(collection, key)) this.commit({ t: 'del', c: collection, k: key })
  }

  drop(prefix: string): void {
    this.commit({ t: 'drop', prefix })
  }

  private commit(op: Op): void {
    this.apply(op)
    if (this.disk?.append(op)) this.compact()
  }

  private bump(collection: string): void {
    this.versions.set(collection, this.version(collection) + 1)
  }

  private apply(op: Op): void {
    if (op.t !== 'drop') this.bump(op.c)
    else
      for (const name of new Set([...this.collections.keys(), ...this.versions.keys()]))
        if (name.startsWith(op.prefix)) this.bump(name)
    if (op.t === 'put') {
      const collection = this.collections.get(op.c) ?? new Map<string, Json>()
      if (collection.size === 0) this.collections.set(op.c, collection)
      collection.set(op.k, op.v)
    } else if (op.t === 'del') {
      const collection = this.collections.get(op.c)
      collection?.delete(op.k)
      if (collection?.size === 0) this.collections.delete(op.c)
    } else {
      for (const name of [...this.collections.keys()])
        if (name.startsWith(op.prefix)) this.collections.delete(name)
    }
  }

  private compact(): void {
    if (!this.disk) return
    const data: Record<string, Array<[string, Json]>> = {}
    for (const [name, collection] of this.collections) data[name] = [...collection.entries()]
    this.disk.compact(data)
    this.disk.sweepBlobs(this.blobsInUse())
  }

  private blobsInUse(): Set<string> {
    const inUse = new Set<string>()
    for (const [name, collection] of this.collections) {
      if (!name.endsWith(`${SEP}media`)) continue
      for (const record of collection.values()) {
        const blob = (record as { blob?: unknown }).blob
        if (typeof blob === 'string') inUse.add(blob)
      }
    }
    return inUse
  }

  /** Stores bytes and returns the blob name a media record then points at. */
  writeBlob(bytes: Buffer): string {
    if (this.disk) return this.disk.writeBlob(bytes)
    const name = `m${++this.blobCounter}`
    this.memoryBlobs.set(name, bytes)
    return name
  }

  /** Forgets bytes no record points at any more; on disk the next compaction sweeps them. */
  releaseBlob(name: string): void {
    if (this.disk) fs.rmSync(this.disk.blobPath(name), { force: true })
    else this.memoryBlobs.delete(name)
  }

  openBlob(name: string): { stream: Readable; size: number } | undefined {
    if (!this.disk) {
      const bytes = this.memoryBlobs.get(name)
      return bytes && { stream: Readable.from([bytes]), size: bytes.length }
    }
    const file = this.disk.blobPath(name)
    let size: number
    try {
      size = fs.statSync(file).size
    } catch {
      return undefined
    }
    return { stream: fs.createReadStream(file), size }
  }

  readBlob(name: string): Buffer | undefined {
    if (!this.disk) return this.memoryBlobs.get(name)
    try {
      return fs.readFileSync(this.disk.blobPath(name))
    } catch {
      return undefined
    }
  }

  close(): void {
    this.disk?.closeJournal()
    this.disk?.unlock()
  }
}
