// An in-memory stand-in for the engine's RemotePort, for engine unit tests only (the end-to-end
// tests use the real client against the emulator). It stamps content updateDate on each write
// like the server does, and counts calls.

import type { EngineLogger, RemotePort } from '../../src/engine/remote-port.js'
import { CAPABILITIES, type Capabilities, type Dialect } from '../../src/remote/capabilities.js'
import type { JsonObject } from '../../src/workspace/codec.js'
import type { Kind } from '../../src/workspace/kinds.js'

export class MemoryRemote implements RemotePort {
  readonly dialect: Dialect
  readonly capabilities: Capabilities
  readonly items = new Map<string, JsonObject>()
  calls: string[] = []
  private clock = 0

  constructor(dialect: Dialect = 'spec') {
    this.dialect = dialect
    this.capabilities = CAPABILITIES[dialect]
  }

  seed(kind: Kind, object: JsonObject): void {
    this.store(kind, object)
  }

  private store(kind: Kind, object: JsonObject): JsonObject {
    const stored =
      kind === 'content'
        ? { ...object, updateDate: new Date(Date.UTC(2024, 0, 1, 0, 0, ++this.clock)).toISOString() }
        : { ...object }
    this.items.set(`${kind}:${object.id}`, stored)
    return stored
  }

  async list(kind: Kind): Promise<JsonObject[]> {
    this.calls.push(`list ${kind}`)
    return [...this.items.entries()].filter(([key]) => key.startsWith(`${kind}:`)).map(([, v]) => ({ ...v }))
  }

  async get(kind: Kind, id: string): Promise<JsonObject | undefined> {
    this.calls.push(`get ${kind} ${id}`)
    const found = this.items.get(`${kind}:${id}`)
    return found ? { ...found } : undefined
  }

  async put(kind: Kind, id: string, body: JsonObject): Promise<JsonObject> {
    this.calls.push(`put ${kind} ${id}`)
    return { ...this.store(kind, { ...body, id }) }
  }

  async remove(kind: Kind, id: string): Promise<void> {
    this.calls.push(`remove ${kind} ${id}`)
    this.items.delete(`${kind}:${id}`)
  }

  async pullInherited(kind: Kind, id: string): Promise<void> {
    this.calls.push(`pull ${kind} ${id}`)
  }
}

export const silentLogger: EngineLogger = { info() {}, warn() {}, error() {}, debug() {} }
