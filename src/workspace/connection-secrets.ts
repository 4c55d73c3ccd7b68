// Secret values of a connection (git passwords, API tokens, keys) never reach a file: the file
// holds a `${ENV_VAR}` reference in their place, which push resolves from the environment.
// The server returns secrets in plain text (upstream §5.4), so every server object is masked
// before anything (file, hash, state, log, conflict copy) is made from it.

import type { JsonObject } from './codec.js'

/** Key names that hold a secret, matched on the last key of the field's path. */
const SECRET_KEY = /password|passwd|passphrase|secret|token|credential|apikey|api_key|privatekey|private_key/i
const KEY_SUFFIX = /(^|[_-])key$|[a-z0-9]Key$|^key$/

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) || KEY_SUFFIX.test(key)
}

const REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/

/** The variable a `${NAME}` string names, or undefined for any other value. */
export function referenceName(value: unknown): string | undefined {
  return typeof value === 'string' ? REFERENCE.exec(value)?.[1] : undefined
}

/**
 * Which variables a reference may read. Connection files are committed, so a pull request writes
 * them: a reference to any variable of the runner (`${CMS_SYNC_TOKEN}`, a cloud key) in a
 * connection whose deployer points at the pull request's host would hand that value to the
 * server and on. Only variables declared as connection secrets are read: by their name
 * (`CMS_SYNC_SECRET_…`, a name no other variable of cms-sync or of a runner has), or listed in
 * the environment's CMS_SYNC_SECRETS (for names chosen before; never in a committed file, which
 * the pull request could widen). The token is never one, whatever is declared.
 */
export const SECRET_PREFIX = 'CMS_SYNC_SECRET_'
const SECRET_LIST = 'CMS_SYNC_SECRETS'
const NEVER_A_SECRET = new Set(['CMS_SYNC_TOKEN'])

function listedSecrets(env: NodeJS.ProcessEnv): Set<string> {
  return new Set((env[SECRET_LIST] ?? '').split(/[\s,]+/).filter(Boolean))
}

/** Whether a reference may read the variable `name` (see SECRET_PREFIX). */
export function isDeclaredSecret(name: string, env: NodeJS.ProcessEnv): boolean {
  if (NEVER_A_SECRET.has(name)) return false
  return name.startsWith(SECRET_PREFIX) || listedSecrets(env).has(name)
}

/** Why a reference may not read `name`, and what to do; undefined when it may. */
function undeclaredProblem(fieldPath: string, name: string, env: NodeJS.ProcessEnv): string | undefined {
  if (isDeclaredSecret(name, env)) return undefined
  if (NEVER_A_SECRET.has(name))
    return `${fieldPath} refers to \${${name}}, cms-sync's own token, which is never a connection secret; write the connection's own secret as a \${${SECRET_PREFIX}…} reference`
  const renamed = `${SECRET_PREFIX}${name.replace(/^CMS_SYNC_/, '')}`
  return `${fieldPath} refers to \${${name}}, which is not declared as a connection secret (references read only ${SECRET_PREFIX}* variables and those ${SECRET_LIST} lists): rename the reference and its variable to \${${renamed}}, or declare it where the variable is set: ${SECRET_LIST}=${name}`
}

/**
 * The reference cms-sync writes for a secret it has no name for yet:
 * `CMS_SYNC_SECRET_<ID>_<PATH>`, upper-cased, every other character as `_` (deployer.password of
 * "website" becomes CMS_SYNC_SECRET_WEBSITE_DEPLOYER_PASSWORD). Deterministic, so two machines
 * pulling the same connection write the same file.
 */
export function defaultReferenceName(connectionId: string, fieldPath: string): string {
  return `${SECRET_PREFIX}${connectionId}_${fieldPath}`.toUpperCase().replace(/[^A-Z0-9_]/g, '_')
}

export interface SecretField {
  /** Dotted path, e.g. `deployer.password`. */
  path: string
  value: string
}

/**
 * The settings of the server's deployers and processors known to hold no secret (upstream §5.4:
 * what the server derives, the folders, the branch, the user name), and the connection's own
 * id and title. Every other string under `deployer` or `processor` is a secret, whatever its
 * key is called: a deployer may take an `auth`, a `pass`, a header list or a settings array,
 * and a name-based guess let such values into committed files.
 */
const HARMLESS = new Set([
  'id',
  'title',
  'url',
  'processor.name',
  'processor.alias',
  'processor.title',
  'processor.fileExtension',
  'deployer.name',
  'deployer.title',
  'deployer.alias',
  'deployer.paths.media',
  'deployer.paths.content',
  'deployer.rootPath',
  'deployer.branch',
  'deployer.username',
  'deployer.repo',
  'deployer.url',
])
/** Where the settings of a connection's deployer and processor live; other bodies have no such part. */
const SETTINGS = new Set(['deployer', 'processor'])

/**
 * Whether a string is a URL that carries a credential: `https://user:pass@host`, a token in the
 * user part (`https://ghp_…@github.com`), or a query (`?access_token=…`, signed URLs), or a
 * scp-style `user@host:path`. Such a URL is a secret wherever it stands.
 */
export function urlCarriesCredentials(value: string): boolean {
  if (/^[^\s/@:]+@[^\s/@:]+:/.test(value)) return true
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return false
  try {
    const url = new URL(value)
    return url.username !== '' || url.password !== '' || url.search !== ''
  } catch {
    // Not a URL after all, but it looked like one: only a credential-like part makes it secret.
    return value.includes('@')
  }
}

/** Whether the string at `path` (keys from the object's root) is a secret. */
function isSecretAt(path: readonly string[], value: string): boolean {
  if (value === '') return false
  if (referenceName(value) !== undefined) return true // a reference always stands for a secret
  if (isSecretKey(path[path.length - 1]!)) return true
  if (urlCarriesCredentials(value)) return true
  return SETTINGS.has(path[0]!) && !HARMLESS.has(path.join('.'))
}

/**
 * Every secret string in the object: a `${NAME}` reference, a string under a key named like a
 * secret, a URL carrying a credential, and every string of a deployer's or processor's settings
 * not known to be harmless (arrays included, by index: `deployer.headers.0.value`).
 */
export function secretFields(value: unknown, prefix: readonly string[] = []): SecretField[] {
  if (value === null || typeof value !== 'object') return []
  const out: SecretField[] = []
  for (const [key, child] of Object.entries(value as JsonObject)) {
    const path = [...prefix, key]
    if (typeof child === 'string' && isSecretAt(path, child)) out.push({ path: path.join('.'), value: child })
    else if (child !== null && typeof child === 'object') out.push(...secretFields(child, path))
  }
  return out
}

/** A copy of the object with the string at each secret's path replaced by `replace(path, value)`. */
export function replaceSecrets(
  object: JsonObject,
  replace: (path: string, value: string) => string,
  prefix: readonly string[] = [],
): JsonObject {
  const out: JsonObject = Array.isArray(object) ? ([...object] as unknown as JsonObject) : { ...object }
  for (const [key, child] of Object.entries(object)) {
    const path = [...prefix, key]
    if (typeof child === 'string' && isSecretAt(path, child)) out[key] = replace(path.join('.'), child)
    else if (child !== null && typeof child === 'object')
      out[key] = replaceSecrets(child as JsonObject, replace, path)
  }
  return out
}

/** The references a file uses, by field path (a person may choose any variable name). */
export function referencesIn(file: JsonObject): Map<string, string> {
  const refs = new Map<string, string>()
  for (const field of secretFields(file)) {
    const name = referenceName(field.value)
    if (name) refs.set(field.path, name)
  }
  return refs
}

/** Server object -> the same with every secret replaced by its reference (the file's name, else the default). */
export function maskSecrets(
  remote: JsonObject,
  connectionId: string,
  known: ReadonlyMap<string, string>,
): JsonObject {
  return replaceSecrets(remote, (path, value) =>
    // A value that already is a reference (never resolved on the server) stays as it is.
    referenceName(value) ? value : `\${${known.get(path) ?? defaultReferenceName(connectionId, path)}}`,
  )
}

export class UnresolvedReferenceError extends Error {}

/**
 * Why the file's references cannot be resolved here: each one to an undeclared variable, then
 * those whose variable is not set. What a push of the file would fail with, said by status too.
 */
export function referenceProblems(file: JsonObject, env: NodeJS.ProcessEnv): string[] {
  const undeclared: string[] = []
  const missing: string[] = []
  for (const field of secretFields(file)) {
    const name = referenceName(field.value)
    if (name === undefined) continue // a literal: validate() refuses the file before any push
    const problem = undeclaredProblem(field.path, name, env)
    if (problem) undeclared.push(problem)
    else if (env[name] === undefined) missing.push(`${field.path} refers to \${${name}}`)
  }
  if (missing.length > 0)
    undeclared.push(
      `${missing.join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} not set in the environment; set ${missing.length === 1 ? 'it' : 'them'} and push again`,
    )
  return undeclared
}

/** The string the server holds at a dotted secret path, if it holds one that is not a reference. */
function serverSecretAt(remote: JsonObject | undefined, fieldPath: string): string | undefined {
  let at: unknown = remote
  for (const key of fieldPath.split('.')) {
    if (at === null || typeof at !== 'object') return undefined
    at = (at as JsonObject)[key]
  }
  return typeof at === 'string' && referenceName(at) === undefined ? at : undefined
}

/**
 * File object -> the body to send, every reference replaced by its declared variable's value,
 * or with `keep`, by the server's current secret where it holds one (a conflict settled for the
 * server: the variable is stale, the server's secret stays).
 */
export function resolveSecrets(
  file: JsonObject,
  env: NodeJS.ProcessEnv,
  where: string,
  keep?: JsonObject,
): JsonObject {
  const kept = (path: string) => (keep ? serverSecretAt(keep, path) : undefined)
  const needed = keep ? replaceSecrets(file, (path, value) => (kept(path) === undefined ? value : '')) : file
  const problems = referenceProblems(needed, env)
  if (problems.length > 0)
    throw new UnresolvedReferenceError(`${where}: ${problems.join('; ')} (nothing was sent)`)
  return replaceSecrets(file, (path, value) => {
    const name = referenceName(value)
    return name === undefined ? value : (kept(path) ?? (env[name] as string))
  })
}

/**
 * The references of the file whose declared, set variable holds another value than the server
 * does there: a push would replace the server's secret with the variable's. No base is kept for a
 * secret (its value is in no file and no state), so who changed it cannot be told: it is a
 * conflict unless both agree. An unset variable is a failure of its own (referenceProblems).
 */
export function differingSecrets(
  file: JsonObject,
  remote: JsonObject,
  env: NodeJS.ProcessEnv,
): { path: string; name: string }[] {
  return secretFields(file).flatMap((field) => {
    const name = referenceName(field.value)
    if (name === undefined || !isDeclaredSecret(name, env) || env[name] === undefined) return []
    const server = serverSecretAt(remote, field.path)
    return server !== undefined && server !== env[name] ? [{ path: field.path, name }] : []
  })
}

/**
 * Secrets whose referenced variable is set but holds something else than the server: the
 * server's secret changed (or the variable is stale). The file cannot show it without holding
 * the secret, so it is reported instead. Unset variables say nothing (a pull-only machine).
 */
export function driftedSecrets(
  remote: JsonObject,
  connectionId: string,
  known: ReadonlyMap<string, string>,
  env: NodeJS.ProcessEnv,
): string[] {
  return secretFields(remote)
    .filter((field) => referenceName(field.value) === undefined)
    .flatMap((field) => {
      const name = known.get(field.path) ?? defaultReferenceName(connectionId, field.path)
      // Only a declared variable is ever compared: a reference to any other reads nothing.
      const local = isDeclaredSecret(name, env) ? env[name] : undefined
      return local !== undefined && local !== field.value
        ? [
            `${field.path}: the server holds a different secret than \${${name}}; the file keeps the reference and the secret is not written anywhere; set ${name} to the server's value, or push with --prefer local to give the server yours`,
          ]
        : []
    })
}

/**
 * Whether two file forms are the same apart from their secrets: a reference equals any other
 * (the values are the server's and never in a file), and key order aside (a base a version-1
 * state recorded has its keys sorted).
 */
export function sameApartFromReferences(a: unknown, b: unknown): boolean {
  if (referenceName(a) !== undefined && referenceName(b) !== undefined) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a === b
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keysA = Object.keys(a)
  return (
    keysA.length === Object.keys(b).length &&
    keysA.every(
      (key) =>
        Object.hasOwn(b, key) &&
        sameApartFromReferences((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
    )
  )
}
