// media.yaml: the committed index of media path (relative to media/) -> media id, so a fresh
// clone knows which server item every file is and never uploads it again. cms-sync writes it
// in one canonical form (sorted, one `path: id` line each, double-quoted where a plain YAML
// scalar would be misread or is more than path characters) and validates hand edits.

import type { FileHandle } from 'node:fs/promises'
import { parse, Schema } from 'yaml'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import { absolute } from './layout.js'
import { openNoFollow, SymbolicLinkError } from './no-follow.js'

export const MEDIA_INDEX = 'media.yaml'
const HEADER =
  '# Media path (relative to media/) -> media id on the server. Committed, so a clone knows every id.'

export class MediaIndexError extends CliError {
  constructor(problem: string) {
    super(
      `${MEDIA_INDEX}: ${problem}; fix the file (or delete it to rebuild it from the server)`,
      ExitCode.usage,
    )
  }
}

/** Problems with a media path as a workspace path: empty parts, `.`/`..`, backslashes, control characters. */
export function mediaPathProblem(rel: string): string | undefined {
  if (rel === '' || rel.startsWith('/') || rel.endsWith('/'))
    return 'expected a path relative to media/, like "images/logo.png"'
  for (const part of rel.split('/')) {
    if (part === '' || part === '.' || part === '..')
      return `"${part}" is not allowed as a part of a media path`
    if (/[\\\u0000-\u001f\u007f]/.test(part))
      return 'backslashes and control characters are not allowed in a media path'
    if (Buffer.byteLength(part) > 255) return 'a part of the path is longer than 255 bytes'
  }
  return undefined
}

/**
 * The last index read, by file and stat: `watch` reads media.yaml on every poll, and parsing
 * thousands of entries costs a noticeable part of a second (docs/benchmarks.md, "Figures behind
 * code comments"); a file with the same size, mtime and inode
 * holds the same text (the stat cache of content files trusts the same).
 */
let lastRead: { file: string; stat: string; index: Map<string, string> } | undefined

/** The index, or undefined when there is no media.yaml (a new workspace). */
export async function readMediaIndex(root: string): Promise<Map<string, string> | undefined> {
  const file = absolute(root, MEDIA_INDEX)
  let text: string
  let key: string
  let handle: FileHandle | undefined
  try {
    // Never through a link (to a shell start-up file, say): no-follow.ts.
    handle = await openNoFollow(root, MEDIA_INDEX)
    const before = await handle.stat()
    key = `${before.size}:${before.mtimeMs}:${before.ino}`
    if (lastRead?.file === file && lastRead.stat === key) return new Map(lastRead.index)
    text = await handle.readFile('utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    if (error instanceof SymbolicLinkError)
      throw new MediaIndexError(error.link === MEDIA_INDEX ? error.problem : error.message)
    throw error
  } finally {
    await handle?.close()
  }
  const index = parseMediaIndex(text)
  lastRead = { file, stat: key, index: new Map(index) }
  return index
}

// The canonical form, line by line: `key: value`, each a plain scalar of path characters or a
// JSON string. The YAML library's duplicate key check compares every key with every other, so
// parsing with it grows with the square of the media and dominated a no-change status
// (docs/benchmarks.md, "media.yaml read line by line").
const PLAIN = '[A-Za-z0-9_][A-Za-z0-9._/-]*'
const QUOTED = '"(?:[^"\\\\\\u0000-\\u001f]|\\\\.)*"'
const CANONICAL_LINE = new RegExp(`^(${PLAIN}|${QUOTED}): (${PLAIN}|${QUOTED})$`)
/** Plain scalars YAML's core schema reads as something other than the same string. */
const NOT_A_STRING =
  /^(?:[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE|0o[0-7]+|0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)$/

function canonicalScalar(token: string): string | undefined {
  if (!token.startsWith('"')) return NOT_A_STRING.test(token) ? undefined : token
  try {
    // YAML's double-quoted escapes are a superset of JSON's; anything else goes to the library.
    return JSON.parse(token) as string
  } catch {
    return undefined
  }
}

/**
 * The mapping when the text is in the form cms-sync writes (comments and blank lines aside),
 * else undefined: then the YAML library reads it, and reports what is wrong with it (duplicate
 * keys included) in its own words.
 */
function parseCanonical(text: string): Record<string, unknown> | undefined {
  const value: Record<string, unknown> = {}
  const seen = new Set<string>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = CANONICAL_LINE.exec(line)
    if (!match) return undefined
    const key = canonicalScalar(match[1]!)
    const id = canonicalScalar(match[2]!)
    if (key === undefined || id === undefined || key === '__proto__' || seen.has(key)) return undefined
    seen.add(key)
    value[key] = id
  }
  return seen.size > 0 ? value : undefined
}

export function parseMediaIndex(text: string): Map<string, string> {
  let value: unknown = parseCanonical(text)
  try {
    value ??= parse(text)
  } catch (error) {
    throw new MediaIndexError(`not valid YAML (${(error as Error).message.split('\n')[0]})`)
  }
  if (value === null || value === undefined) return new Map()
  if (typeof value !== 'object' || Array.isArray(value))
    throw new MediaIndexError('expected a mapping of media path to media id, like `images/logo.png: 3f2a9c…`')
  const index = new Map<string, string>()
  const pathOf = new Map<string, string>()
  for (const [rel, id] of Object.entries(value as Record<string, unknown>)) {
    const problem = mediaPathProblem(rel)
    if (problem) throw new MediaIndexError(`${JSON.stringify(rel)}: ${problem}`)
    if (typeof id !== 'string' || id === '') {
      const hint =
        typeof id === 'number' ? ' (quote it: an unquoted id made of digits is read as a number)' : ''
      throw new MediaIndexError(
        `${JSON.stringify(rel)}: expected a media id string, got ${JSON.stringify(id)}${hint}`,
      )
    }
    const other = pathOf.get(id)
    if (other !== undefined)
      throw new MediaIndexError(
        `${JSON.stringify(rel)} and ${JSON.stringify(other)} both name the media id "${id}"`,
      )
    pathOf.set(id, rel)
    index.set(rel, id)
  }
  return index
}

/**
 * The tags a plain scalar of a document parsed as `parse` parses it (YAML 1.2, core schema)
 * may resolve to by its text: numbers, booleans, null. A path-character text none of them
 * claims reads back as the string it is. Asked of the parser's own schema, so the answer is the
 * parser's, without parsing a document per scalar (media.yaml of a large pull holds two
 * scalars per media item: a parse each cost about 0.1 ms).
 */
const RESOLVED_BY_TEXT = new Schema({}).tags.flatMap((tag) =>
  tag.default === true && 'test' in tag && tag.test instanceof RegExp ? [tag.test] : [],
)

/** A scalar as plain text when it reads back as itself, else as a double-quoted (JSON) string. */
export function scalar(text: string): string {
  if (/^[A-Za-z0-9_][A-Za-z0-9._/-]*$/.test(text) && !RESOLVED_BY_TEXT.some((test) => test.test(text)))
    return text
  return JSON.stringify(text)
}

export function mediaIndexText(index: ReadonlyMap<string, string>): string {
  const lines = [...index.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([rel, id]) => `${scalar(rel)}: ${scalar(id)}`)
  return `${[HEADER, ...lines].join('\n')}\n`
}
