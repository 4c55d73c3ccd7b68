// connections/<id>.json: `id, title, url, processor, deployer`, with every secret value as a
// `${ENV_VAR}` reference (connection-secrets.ts). Built per workspace: the codec reads the
// reference names a person chose from the connection's file, so a pull writes them back
// unchanged (no echo), and resolves them from the environment on push. Connections have no
// timestamps, so their revision is the hash of their masked form (secret values never in it).

import { readFileSync, statSync } from 'node:fs'
import { type Codec, carriedFields, fileBytes, type JsonObject, pick } from './codec.js'
import {
  differingSecrets,
  driftedSecrets,
  maskSecrets,
  referenceName,
  referenceProblems,
  referencesIn,
  resolveSecrets,
  sameApartFromReferences,
  secretFields,
} from './connection-secrets.js'
import { checkFile, type FieldSpec } from './file-checks.js'
import { absolute, itemPath } from './layout.js'

const CONNECTION: Record<string, FieldSpec> = {
  title: { type: 'string' },
  url: { type: 'string' },
  processor: { type: 'object' },
  deployer: { type: 'object' },
}

/** The alias the server itself stores when none of its types was chosen (upstream §5.4). */
const BASE_ALIAS = { deployer: 'deployer', processor: 'processor' } as const

export interface ConnectionCodecOptions {
  /** The workspace, to read the reference names of an existing file; none = default names only. */
  root?: string
  env: NodeJS.ProcessEnv
}

function revisionForm(remote: JsonObject): JsonObject {
  return maskSecrets(pick(remote, ['id', ...Object.keys(CONNECTION)]), String(remote.id), new Map())
}

export function createConnectionCodec(opts: ConnectionCodecOptions): Codec {
  const cache = new Map<string, { key: string; refs: Map<string, string> }>()

  /** The reference names the connection's file uses now (cached by size and mtime). */
  function knownReferences(id: string): Map<string, string> {
    if (!opts.root) return new Map()
    const path = itemPath('connection', id)
    try {
      const file = absolute(opts.root, path)
      const info = statSync(file)
      const key = `${info.size}:${info.mtimeMs}:${info.ino}`
      const hit = cache.get(path)
      if (hit?.key === key) return hit.refs
      const refs = referencesIn(JSON.parse(readFileSync(file, 'utf8')) as JsonObject)
      cache.set(path, { key, refs })
      return refs
    } catch {
      // No file yet, or not JSON (its own problem is reported by the scan): default names.
      return new Map()
    }
  }

  const codec: Codec = {
    kind: 'connection',
    toFile(remote) {
      const id = String(remote.id)
      return maskSecrets(pick(remote, ['id', ...Object.keys(CONNECTION)]), id, knownReferences(id))
    },
    validate(value, expectedId) {
      const checked = checkFile(value, expectedId, CONNECTION)
      // A secret written into the file would end up in git: refuse it, say what to write instead.
      const literal = secretFields(value).filter((field) => referenceName(field.value) === undefined)
      const problems = [
        ...(checked.ok ? [] : checked.problems),
        ...literal.map(
          (field) =>
            `${field.path}: a secret must be a \${ENV_VAR} reference (e.g. "\${CMS_SYNC_SECRET_…}"), not the value itself; files are committed`,
        ),
      ]
      return problems.length === 0 ? checked : { ok: false, problems }
    },
    checksServerTypes: true,
    sameApartFromSecrets: sameApartFromReferences,
    checkReferences(file, ctx) {
      // What the push would fail with for its secrets, said before any request (and by status).
      const problems: string[] = referenceProblems(file, opts.env)
      for (const part of ['deployer', 'processor'] as const) {
        const known = part === 'deployer' ? ctx.deployers : ctx.processors
        const alias = (file[part] as JsonObject | undefined)?.alias
        if (!known || alias === undefined || alias === BASE_ALIAS[part]) continue
        if (typeof alias !== 'string' || !known.has(alias)) {
          problems.push(
            `${part}.alias: expected one of the server's ${part} types (${[...known].sort().join(', ')}), got ${JSON.stringify(alias)}`,
          )
        }
      }
      return problems
    },
    toBody(file, ctx) {
      return {
        ...carriedFields(ctx.current),
        ...resolveSecrets(
          file,
          opts.env,
          itemPath('connection', String(file.id)),
          ctx.keepServerSecrets ? ctx.current : undefined,
        ),
      }
    },
    parentOf() {
      return undefined
    },
    fromWriteAnswer(stored) {
      return codec.toFile(stored)
    },
    revisionOf(remote) {
      // Masked with the default names, not the file's: choosing another reference name in the
      // file is a local edit and must not make the server copy look changed too.
      return fileBytes(revisionForm(remote)).hash
    },
    listIsIncomplete() {
      return false
    },
    secretsDiffering(file, remote) {
      return differingSecrets(file, remote, opts.env)
    },
    remoteProblems(remote) {
      const id = String(remote.id)
      return driftedSecrets(remote, id, knownReferences(id), opts.env)
    },
  }
  return codec
}
