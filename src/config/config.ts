// cms-sync.yaml: find it, read it, validate it, write a new one. The file is committed and
// edited by hand, so every refusal names the file, the key path, what was expected and what was
// found, and a rewrite keeps the user's comments and layout.

import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { isMap, parseDocument } from 'yaml'
import * as z from 'zod/mini'
import { DEFAULT_LOGS_DAYS } from '../log/log-files.js'
import { writeFileAtomically } from '../util/atomic-write.js'
import { ConfigError } from './errors.js'
import { CONFIG_FILE } from './find-root.js'

export { ConfigError } from './errors.js'
export { CONFIG_FILE, findWorkspaceRoot } from './find-root.js'

export type ResourceName = 'schemas' | 'content' | 'media' | 'forms' | 'connections'
export const RESOURCE_NAMES: readonly ResourceName[] = ['schemas', 'content', 'media', 'forms', 'connections']

/** 128 MB: ten times a 100,000-node listing of 700-byte items, a quarter of the former fixed cap. */
export const DEFAULT_LISTING_MB = 128
export const DEFAULT_MEDIA_MB = 1024
export const DEFAULT_TRASH_DAYS = 30
export { DEFAULT_LOGS_DAYS }

const MAX_DAYS = 36_500

/** What each key expects, in words; `*` stands for a list index. */
const EXPECTED: Record<string, string> = {
  '': 'a mapping with at least server, project and environment',
  server: 'an http:// or https:// URL without user, password, query or fragment',
  project: 'a project id (non-empty text without "/", "?" or "#")',
  environment: 'an environment name (non-empty text without "/", "?" or "#")',
  resources: `a list of resource names, each at most once: ${RESOURCE_NAMES.join(', ')}`,
  'resources.*': `one of ${RESOURCE_NAMES.join(', ')}`,
  rateLimit: 'a mapping with requestsPerSecond and concurrency',
  'rateLimit.requestsPerSecond': 'a number from 1 to 1000',
  'rateLimit.concurrency': 'a whole number from 1 to 64',
  watch: 'a mapping with debounceMs, pollSeconds, publishQuietMs, massChange, massDelete and verifyMedia',
  'watch.publishQuietMs': 'a whole number of milliseconds from 0 to 3600000',
  'watch.debounceMs': 'a whole number of milliseconds from 0 to 60000',
  'watch.pollSeconds': 'a number of seconds from 1 to 86400',
  'watch.massChange': 'a mapping with files and percent',
  'watch.massChange.files': 'a whole number of files from 1 to 1000000',
  'watch.massChange.percent': 'a number from 0 to 100',
  'watch.massDelete': 'a mapping with files and percent',
  'watch.massDelete.files': 'a whole number of files from 1 to 1000000',
  'watch.massDelete.percent': 'a number from 0 to 100',
  'watch.verifyMedia': 'a mapping with requestsPerHour and megabytesPerHour',
  'watch.verifyMedia.requestsPerHour': 'a whole number of requests from 0 (off) to 3600',
  'watch.verifyMedia.megabytesPerHour': 'a whole number of megabytes from 1 to 1000000',
  safety: 'a mapping with maxDeletePercent and maxDeletes',
  'safety.maxDeletePercent': 'a number from 0 to 100',
  'safety.maxDeletes': 'a whole number from 0 up',
  dialect: 'one of auto, spec, upstream',
  publishing: 'one of auto, manual',
  tls: 'a mapping with insecure',
  'tls.insecure': 'true or false',
  limits: 'a mapping with listingMB and mediaMB',
  'limits.listingMB': 'a whole number of megabytes from 1 to 4096',
  'limits.mediaMB': 'a whole number of megabytes from 1 to 1048576',
  retention: 'a mapping with trashDays and logsDays',
  'retention.trashDays': `a whole number of days from ${DEFAULT_TRASH_DAYS} to ${MAX_DAYS} (trash is kept at least ${DEFAULT_TRASH_DAYS} days)`,
  'retention.logsDays': `a whole number of days from 1 to ${MAX_DAYS}`,
  ui: 'a mapping with enabled and port',
  'ui.enabled': 'true or false',
  'ui.port': 'a whole port number from 0 to 65535 (0: a free one)',
}

function isServerUrl(value: string): boolean {
  try {
    const url = new URL(value)
    // Credentials in the URL would end up in a committed file.
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      !url.username &&
      !url.password &&
      !url.search &&
      !url.hash &&
      !value.includes('?') &&
      !value.includes('#')
    )
  } catch {
    return false
  }
}

/** "(did you mean http://host:port?)" for an address typed without its scheme. */
function schemeHint(value: unknown): string {
  if (typeof value !== 'string' || /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return ''
  const guess = `http://${value}`
  return isServerUrl(guess) ? ` (did you mean ${guess}?)` : ''
}

/**
 * Checks a server URL given on the command line (`--server`) as cms-sync.yaml's server key is
 * checked, naming the option: `127.0.0.1:8080` gets the config's words, not `Invalid URL`.
 */
export function checkServerUrl(value: string, where: string): void {
  if (!isServerUrl(value))
    throw new ConfigError(
      `${where}: expected ${EXPECTED.server}, got ${JSON.stringify(value)}${schemeHint(value)}`,
    )
}

// zod/mini: the same checks and issues as zod's chained API, at a twentieth of the code to
// load on every command (the chained API cannot be tree-shaken).
const name = z.string().check(z.minLength(1), z.regex(/^[^/?#]+$/))

/** An integer from `min` to `max`, `fallback` when the key is absent. */
const intIn = (min: number, max: number, fallback: number) =>
  z._default(z.int().check(z.minimum(min), z.maximum(max)), fallback)

/** A number from `min` to `max`, `fallback` when the key is absent. */
const numberIn = (min: number, max: number, fallback: number) =>
  z._default(z.number().check(z.minimum(min), z.maximum(max)), fallback)

/** A mapping of the file whose every key has a default: absent, it is those defaults. */
const section = <Shape extends z.core.$ZodLooseShape>(shape: Shape) =>
  z.prefault(z.strictObject(shape), {} as z.input<z.ZodMiniObject<Shape, z.core.$strict>>)

/** watch.massChange / watch.massDelete (src/watch/mass-change.ts has the same defaults). */
const pauseThreshold = (files: number, percent: number) =>
  section({ files: intIn(1, 1_000_000, files), percent: numberIn(0, 100, percent) })

const schema = z.strictObject({
  server: z.string().check(z.refine(isServerUrl)),
  project: name,
  environment: name,
  resources: z._default(
    z
      .array(z.enum(RESOURCE_NAMES as [ResourceName, ...ResourceName[]]))
      .check(z.refine((list) => new Set(list).size === list.length)),
    [...RESOURCE_NAMES],
  ),
  rateLimit: section({
    requestsPerSecond: numberIn(1, 1000, 10),
    concurrency: intIn(1, 64, 4),
  }),
  watch: section({
    debounceMs: intIn(0, 60_000, 100),
    pollSeconds: numberIn(1, 86_400, 10),
    // How long an item's saves must pause before watch publishes it: a burst of saves is one
    // publish (a git deployer makes one commit per publish).
    publishQuietMs: intIn(0, 3_600_000, 5000),
    // The watcher pauses pushing past more than `files` changed, or `percent` of the items.
    massChange: pauseThreshold(50, 20),
    massDelete: pauseThreshold(20, 10),
    // Re-reading media bytes the server gives nothing to compare cheaply for (upstream): the
    // daemon's budget per hour (src/watch/media-verifier.ts); 0 requests turns it off.
    verifyMedia: section({
      requestsPerHour: intIn(0, 3600, 60),
      megabytesPerHour: intIn(1, 1_000_000, 200),
    }),
  }),
  safety: section({
    maxDeletePercent: numberIn(0, 100, 50),
    // An absolute count beside the share: 30 of 10,000 is a small share but many items to lose.
    maxDeletes: z._default(z.int().check(z.minimum(0)), 20),
  }),
  dialect: z._default(z.enum(['auto', 'spec', 'upstream']), 'auto'),
  // auto: isPublished is carried out (publish / unpublish), and a push of a published content
  // item publishes it again, as the CMS's editor does on save; manual: cms-sync deploys nothing,
  // isPublished is written as a field. --publish / --no-publish override it for one run.
  publishing: z._default(z.enum(['auto', 'manual']), 'auto'),
  // `insecure: true` turns off certificate checks for this workspace's server only.
  tls: section({ insecure: z._default(z.boolean(), false) }),
  // The most one listing, and one media file, may weigh before cms-sync stops reading: a broken
  // or hostile server's endless answer must not fill memory or disk.
  limits: section({
    listingMB: intIn(1, 4096, DEFAULT_LISTING_MB),
    mediaMB: intIn(1, 1_048_576, DEFAULT_MEDIA_MB),
  }),
  // How many days .cms-sync/trash/ keeps what a run replaced or deleted (at least
  // DEFAULT_TRASH_DAYS: it is the way back from a wrong pull or --prefer, found out about weeks
  // later), and how many days the logs of earlier days are kept.
  retention: section({
    trashDays: intIn(DEFAULT_TRASH_DAYS, MAX_DAYS, DEFAULT_TRASH_DAYS),
    logsDays: intIn(1, MAX_DAYS, DEFAULT_LOGS_DAYS),
  }),
  // The local page `watch` serves (docs/page.md): on by default, on a free loopback port.
  ui: section({
    enabled: z._default(z.boolean(), true),
    port: intIn(0, 65_535, 0),
  }),
})

/** A validated cms-sync.yaml, defaults filled in: the schema's own output type. */
export type Config = z.output<typeof schema>

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing (the key is missing)'
  if (value === null) return 'null (empty)'
  const kind = Array.isArray(value) ? 'list' : typeof value === 'object' ? 'mapping' : typeof value
  let shown = JSON.stringify(value) ?? String(value)
  if (shown.length > 60) shown = `${shown.slice(0, 57)}...`
  return `${shown} (${kind})`
}

function valueAt(root: unknown, keys: PropertyKey[]): unknown {
  let node = root
  for (const key of keys) {
    if (node === null || typeof node !== 'object') return undefined
    node = (node as Record<PropertyKey, unknown>)[key]
  }
  return node
}

function keyPath(keys: PropertyKey[]): string {
  return keys
    .map((k) => (typeof k === 'number' ? `[${k}]` : String(k)))
    .join('.')
    .replace(/\.\[/g, '[')
}

function messagesFor(error: z.core.$ZodError, raw: unknown, file: string): string[] {
  const lines: string[] = []
  for (const issue of error.issues) {
    const where = keyPath(issue.path)
    const pattern = issue.path.map((k) => (typeof k === 'number' ? '*' : String(k))).join('.')
    if (issue.code === 'unrecognized_keys') {
      const parent = pattern === '' ? '' : `${pattern}.`
      const known = Object.keys(EXPECTED)
        .filter((k) => k.startsWith(parent) && k !== pattern && !k.slice(parent.length).includes('.'))
        .map((k) => k.slice(parent.length))
      for (const key of issue.keys)
        lines.push(`${file}: ${parent}${key}: unknown key (expected one of ${known.join(', ')})`)
      continue
    }
    const expected = EXPECTED[pattern] ?? issue.message
    const value = valueAt(raw, issue.path)
    const hint = pattern === 'server' ? schemeHint(value) : ''
    lines.push(`${file}: ${where || '(top level)'}: expected ${expected}, got ${describeValue(value)}${hint}`)
  }
  return [...new Set(lines)]
}

/** Validates the text of a cms-sync.yaml; `file` names it in messages. */
export function parseConfig(text: string, file: string = CONFIG_FILE): Config {
  const doc = parseDocument(text, { prettyErrors: true })
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((e) => `${file}: ${e.message.split('\n')[0]?.replace(/:$/, '')}`).join('\n'),
    )
  }
  const raw: unknown = doc.toJS()
  const result = schema.safeParse(raw ?? undefined)
  if (!result.success) throw new ConfigError(messagesFor(result.error, raw, file).join('\n'))
  return result.data
}

export async function loadConfig(root: string): Promise<Config> {
  const file = path.join(root, CONFIG_FILE)
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new ConfigError(`${file}: not found; run \`cms-sync init\` to create it`)
    throw new ConfigError(`${file}: cannot be read (${(error as Error).message})`)
  }
  return parseConfig(text, CONFIG_FILE)
}

export type NewConfigValues = Pick<Config, 'server' | 'project' | 'environment'> &
  Partial<Omit<Config, 'server' | 'project' | 'environment'>>

function template(c: Config): string {
  const q = (s: string) => JSON.stringify(s)
  return `# cms-sync workspace settings. Committed with the files; never put a secret here
# (tokens live in ~/.config/cms-sync/credentials.yaml or CMS_SYNC_TOKEN).
server: ${q(c.server)}
project: ${q(c.project)}
environment: ${q(c.environment)}

# Which kinds this workspace mirrors.
resources: [${c.resources.join(', ')}]

# Requests to the server: at most requestsPerSecond in any second, concurrency at once.
rateLimit: { requestsPerSecond: ${c.rateLimit.requestsPerSecond}, concurrency: ${c.rateLimit.concurrency} }

# watch: a saved file of schemas/, content/, forms/ or connections/ is pushed once it has been
# quiet for debounceMs; media, a subfolder's file or a git operation wait 600 ms at least (the
# file watcher delivers every 500 ms while events come). It polls the server every pollSeconds.
# It pauses pushing when more than massChange.files, or more than percent of the items, change
# at once (either trips it; the percent never 3 files or fewer), or more than massDelete.files or percent
# are deleted: a bulk replace. A git operation is one batch, and a branch switch always pauses.
# A published item's publish waits until its saves pause for publishQuietMs.
watch: { debounceMs: ${c.watch.debounceMs}, pollSeconds: ${c.watch.pollSeconds}, publishQuietMs: ${c.watch.publishQuietMs}, massChange: { files: ${c.watch.massChange.files}, percent: ${c.watch.massChange.percent} }, massDelete: { files: ${c.watch.massDelete.files}, percent: ${c.watch.massDelete.percent} } }

# Stop (exit 4) instead of deleting this share of a kind or more, or more than maxDeletes of it,
# in one run (--allow-deletes lifts it).
safety: { maxDeletePercent: ${c.safety.maxDeletePercent}, maxDeletes: ${c.safety.maxDeletes} }

# Media bytes a server cannot vouch for (upstream gives media no dates) are re-read by watch,
# the least recently verified first, within watch.verifyMedia: { requestsPerHour: ${c.watch.verifyMedia.requestsPerHour}, megabytesPerHour: ${c.watch.verifyMedia.megabytesPerHour} }
# (requestsPerHour: 0 turns it off); \`cms-sync status --checksum\` compares them all at once.

dialect: ${c.dialect}          # auto | spec | upstream

# auto: a content item's isPublished is carried out: setting it publishes (deploys through the
# item's connection), clearing it unpublishes, and a push of a published item publishes it
# again, as the CMS's editor does on save. manual: cms-sync deploys nothing; isPublished is
# written as a field and deployment is left to people (the CMS's Publish button, its schedule).
publishing: ${c.publishing}
${c.tls.insecure ? '' : '# '}tls: { insecure: true }   # only for a server with a self-signed certificate

# How many days .cms-sync/trash/ keeps what cms-sync replaced or deleted (at least ${DEFAULT_TRASH_DAYS}),
# and how many days the logs of earlier days in .cms-sync/logs/ are kept.
retention: { trashDays: ${c.retention.trashDays}, logsDays: ${c.retention.logsDays} }
`
}

/**
 * Writes cms-sync.yaml in `root`. A new file gets the commented template; an existing one is
 * updated key by key, keeping its comments. The values are validated first.
 */
export async function writeNewConfig(root: string, values: NewConfigValues): Promise<void> {
  const file = path.join(root, CONFIG_FILE)
  let existing: string | undefined
  try {
    existing = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  let text: string
  if (existing === undefined) {
    const raw = { ...values }
    const result = schema.safeParse(raw)
    if (!result.success) throw new ConfigError(messagesFor(result.error, raw, CONFIG_FILE).join('\n'))
    text = template(result.data)
  } else {
    const doc = parseDocument(existing)
    if (doc.errors.length > 0 || (doc.contents !== null && !isMap(doc.contents))) {
      throw new ConfigError(
        `${CONFIG_FILE}: the existing file is not a valid YAML mapping; fix or remove it first`,
      )
    }
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) continue
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        for (const [sub, subValue] of Object.entries(value)) doc.setIn([key, sub], subValue)
      } else {
        doc.setIn([key], value)
      }
    }
    text = doc.toString({ lineWidth: 0 })
    parseConfig(text)
  }
  await writeFileAtomically(file, text)
}
