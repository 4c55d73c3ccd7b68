// What cms-sync never syncs, in one place, so the scanner and the watcher can never disagree
// about a path: our own state, VCS and package folders, the temp and backup files editors and
// atomic writers leave for a moment (local junk: never a server item's file), and the user's
// `.cmsyncignore` (gitignore semantics).

import { readFile } from 'node:fs/promises'
import path from 'node:path'
import ignore, { type Ignore } from 'ignore'
import { builtInIgnores, LOCAL_JUNK, NEVER_RESOURCES } from './built-in-ignores.js'
import { FOLDER_OF, KINDS } from './kinds.js'
import { isPlainRelative } from './layout.js'

export const IGNORE_FILE_NAME = '.cmsyncignore'
const WINDOWS_DRIVE = /^[A-Za-z]:[\\/]/
const COLON = 58
export const MEDIA_INDEX_FILE = 'media.yaml'

const SYNCED_FOLDERS: ReadonlySet<string> = new Set(KINDS.map((kind) => FOLDER_OF[kind]))

// write-file-atomic (which many tools use) writes `<name>.<uint32>` and renames it over
// `<name>`, as util/atomic-write.ts does where it has no temp folder; the number is printed
// without leading zeros, so a real file such as `archive.tar.001` is not mistaken for one. It
// needs an extension before the number.
const ATOMIC_WRITER_TEMP = /^[^/]+\.[^./]+\.(?:0|[1-9]\d{0,9})$/
/** Both temp-name rules end in a digit: most names need no regex. */
function endsInDigit(name: string): boolean {
  const last = name.charCodeAt(name.length - 1)
  return last >= 48 && last <= 57 // '0'..'9'
}
// vim creates and deletes a file named 4913 to test whether it may write in a folder. A file
// only: a media folder named 4913 stays synced.
const VIM_WRITE_PROBE = '4913'

export interface IgnoreRules {
  /**
   * Whether cms-sync never syncs this path. Takes a workspace-relative path ('a/b.json'), also
   * './a', 'a\\b', a trailing '/' for a directory, or an absolute path (outside the workspace:
   * ignored). The workspace root itself ('' or '.') is never ignored.
   */
  ignores(relPath: string, isDir?: boolean): boolean
  /**
   * Whether the user's `.cmsyncignore` or the never-a-resource rules ignore the path: a
   * choice, which holds for server items too (the built-in junk rules alone hold for local
   * files the server does not have).
   */
  ignoresByChoice(relPath: string, isDir?: boolean): boolean
  /** The user's patterns as read from .cmsyncignore (for messages and `doctor`). */
  readonly userPatterns: readonly string[]
}

/**
 * By workspace root: the paths (and their folders) a sync tracks that a built-in junk rule
 * matches. Set by each media run (keepTracked), read by every IgnoreRules of that root, so the
 * watcher, the stat fingerprint and the scan agree that such a file is synced.
 */
const trackedByRoot = new Map<string, ReadonlySet<string>>()

/** Records the workspace paths (e.g. `media/notes.tmp`) a sync tracks although a built-in rule matches them. */
export function keepTracked(root: string, paths: Iterable<string>): void {
  const kept = new Set<string>()
  for (const p of paths) {
    kept.add(p)
    for (let cut = p.lastIndexOf('/'); cut > 0; cut = p.lastIndexOf('/', cut - 1)) kept.add(p.slice(0, cut))
  }
  const absoluteRoot = path.resolve(root)
  if (kept.size === 0) trackedByRoot.delete(absoluteRoot)
  else trackedByRoot.set(absoluteRoot, kept)
}

/** The rules last loaded: `watch` loads them for every run, and `ignore` remembers its answers. */
let lastLoaded: { root: string; text: string; rules: IgnoreRules } | undefined

/** Reads `.cmsyncignore` at the workspace root (absent is fine) and combines it with the built-in rules. */
export async function loadIgnoreRules(root: string): Promise<IgnoreRules> {
  let text = ''
  try {
    text = await readFile(path.join(root, IGNORE_FILE_NAME), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  if (lastLoaded?.root === root && lastLoaded.text === text) return lastLoaded.rules
  const rules = ignoreRulesFrom(root, text)
  lastLoaded = { root, text, rules }
  return rules
}

/** The same rules from a text already read, for tests and callers that hold the file. */
export function ignoreRulesFrom(root: string, cmsyncignoreText: string): IgnoreRules {
  const userPatterns = cmsyncignoreText
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line !== '' && !line.startsWith('#'))
  // The built-in rules are answered by character tests (built-in-ignores.ts), a quarter of what
  // the `ignore` library takes on a path's first sight (docs/benchmarks.md, "Figures behind code
  // comments"); the library answers the user's patterns. A user's '!' may re-include what a built-in rule ignores, which
  // only gitignore's order of rules decides: then one matcher holds both, in that order.
  const negates = userPatterns.some((pattern) => pattern.startsWith('!'))
  const matcher: Ignore | undefined = negates
    ? ignore().add(NEVER_RESOURCES).add(LOCAL_JUNK).add(userPatterns)
    : userPatterns.length > 0
      ? ignore().add(userPatterns)
      : undefined
  const matches = negates
    ? (key: string) => matcher!.ignores(key)
    : (key: string, plain: string, asDir: boolean) =>
        builtInIgnores(plain, asDir, true) || (matcher?.ignores(key) ?? false)
  // Without the junk rules, for the paths a sync tracks: the same split.
  let byChoice: Ignore | undefined
  const chosen = (key: string, plain: string, asDir: boolean) => {
    if (!negates) return builtInIgnores(plain, asDir, false) || (matcher?.ignores(key) ?? false)
    byChoice ??= ignore().add(NEVER_RESOURCES).add(userPatterns)
    return byChoice.ignores(key)
  }
  const absoluteRoot = path.resolve(root)

  return {
    userPatterns,
    ignores: (relPath: string, isDir = false): boolean => decide(relPath, isDir, false),
    ignoresByChoice: (relPath: string, isDir = false): boolean => decide(relPath, isDir, true),
  }

  function decide(relPath: string, isDir: boolean, choiceOnly: boolean): boolean {
    const normalized = normalizeRelative(absoluteRoot, relPath)
    if (normalized === undefined) return true // outside the workspace: never ours to sync
    if (normalized.path === '') return false
    const asDir = isDir || normalized.trailingSlash
    // `ignore` matches directory patterns ('drafts/') only against a path ending in '/'.
    const key = asDir ? `${normalized.path}/` : normalized.path
    if (choiceOnly) return chosen(key, normalized.path, asDir)
    let ignored = false
    if (!asDir && endsInDigit(normalized.path)) {
      const name = path.posix.basename(normalized.path)
      ignored = ATOMIC_WRITER_TEMP.test(name) || name === VIM_WRITE_PROBE
    }
    ignored ||= matches(key, normalized.path, asDir)
    // A junk-looking path the server has is synced, unless the user chose to ignore it.
    if (ignored && trackedByRoot.get(absoluteRoot)?.has(normalized.path))
      return chosen(key, normalized.path, asDir)
    return ignored
  }
}

/**
 * Whether a path belongs to what cms-sync mirrors: inside one of the kind folders (schemas/,
 * content/, media/, forms/, connections/), one of those folders itself, or media.yaml. It says
 * nothing about ignore rules; callers check both.
 */
export function isSyncedPath(relPath: string): boolean {
  const normalized = normalizeRelative(undefined, relPath)
  if (normalized === undefined || normalized.path === '') return false
  const [top] = normalized.path.split('/')
  if (top === undefined) return false
  return SYNCED_FOLDERS.has(top) || normalized.path === MEDIA_INDEX_FILE
}

interface NormalizedPath {
  /** posix separators, no './' prefix, no trailing '/'; '' for the root */
  path: string
  trailingSlash: boolean
}

/** `ignore` throws on '', './x' and absolute paths; every input is brought to its plain form here. */
function normalizeRelative(absoluteRoot: string | undefined, input: string): NormalizedPath | undefined {
  // The paths of a run are plain already ('content/a.json'): no work for them. ('C:/x' is
  // absolute on Windows, so it takes the long way.)
  if (isPlainRelative(input) && (input.charCodeAt(1) !== COLON || !WINDOWS_DRIVE.test(input)))
    return { path: input, trailingSlash: false }
  let p = input.replaceAll('\\', '/')
  if (path.posix.isAbsolute(p) || path.win32.isAbsolute(input)) {
    if (absoluteRoot === undefined) return undefined
    p = path.relative(absoluteRoot, input).replaceAll('\\', '/')
    if (path.isAbsolute(p)) return undefined
  }
  const trailingSlash = p.endsWith('/')
  p = path.posix.normalize(p === '' ? '.' : p)
  if (p === '.' || p === './') return { path: '', trailingSlash: false }
  if (p === '..' || p.startsWith('../')) return undefined
  p = p.replace(/^\.\//, '').replace(/\/+$/, '')
  return { path: p, trailingSlash }
}
