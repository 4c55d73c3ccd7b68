// What cms-sync never syncs, in one place, so the scanner and the watcher can never disagree
// about a path: our own state, VCS and package folders, the temp and backup files editors and
// atomic writers leave for a moment, and the user's `.cmsyncignore` (gitignore semantics).

import { readFile } from 'node:fs/promises'
import path from 'node:path'
import ignore, { type Ignore } from 'ignore'
import { FOLDER_OF, KINDS } from './kinds.js'
import { isPlainRelative } from './layout.js'

export const IGNORE_FILE_NAME = '.cmsyncignore'
const WINDOWS_DRIVE = /^[A-Za-z]:[\\/]/
const COLON = 58
export const MEDIA_INDEX_FILE = 'media.yaml'

const SYNCED_FOLDERS: ReadonlySet<string> = new Set(KINDS.map((kind) => FOLDER_OF[kind]))

/** gitignore patterns that hold in every workspace, before the user's own rules. */
export const ALWAYS_IGNORED = [
  // Local state, version control and tooling: never resources.
  '.cms-sync/',
  '.git/',
  'node_modules/',
  // vim: swap files (.x.json.swp, .swo, ...) and backups; its '4913' probe is matched below.
  '.*.sw[a-p]',
  '*.swp',
  '*.swx',
  '*~',
  // emacs lock and auto-save files.
  '.#*',
  '\\#*#', // a leading '#' starts a comment in gitignore syntax
  // Generic temp files (VS Code, sublime, many scripts), JetBrains safe-write, LibreOffice locks.
  '*.tmp',
  '*___jb_tmp___',
  '*___jb_old___',
  '.~lock.*#',
  // Operating-system litter.
  '.DS_Store',
  'Thumbs.db',
  'desktop.ini',
]

// ALWAYS_IGNORED as plain string tests on each path segment. Through `ignore` each path costs
// some 15 µs, a fifth of a no-change status over 12,000 files; a regex of these alternatives
// backtracks on every name. gitignore ignores case by default, as `ignore` does, so names are
// compared in lower case. A test holds these equal to ALWAYS_IGNORED.
const ALWAYS_IGNORED_FOLDERS: ReadonlySet<string> = new Set(['.cms-sync', '.git', 'node_modules'])
const ALWAYS_IGNORED_NAMES: ReadonlySet<string> = new Set(['.ds_store', 'thumbs.db', 'desktop.ini'])
/** [prefix, suffix] of each glob in ALWAYS_IGNORED that is `<prefix>*<suffix>`. */
const ALWAYS_IGNORED_GLOBS: readonly (readonly [string, string])[] = [
  ...[...'abcdefghijklmnop'].map((letter) => ['.', `.sw${letter}`] as const), // .*.sw[a-p]
  ['', '.swp'],
  ['', '.swx'],
  ['', '~'],
  ['.#', ''],
  ['#', '#'],
  ['', '.tmp'],
  ['', '___jb_tmp___'],
  ['', '___jb_old___'],
  ['.~lock.', '#'],
]

// A name can only be ignored if it starts like a prefixed glob or an exact name, or ends like
// one of the other globs or names; a folder name, if it starts and ends like one of the
// folders. A lookup of its first and last character codes settles most segments
// (`node-1.json`, `photo.png`, `content`) with no string made: a one-shot command runs this
// cold, some 36,000 times in a 12,200-file status.
const NAME_FIRST = new Uint8Array(128)
const NAME_LAST = new Uint8Array(128)
const FOLDER_FIRST = new Uint8Array(128)
const FOLDER_LAST = new Uint8Array(128)
for (const [prefix, suffix] of ALWAYS_IGNORED_GLOBS) {
  if (prefix !== '') NAME_FIRST[prefix.charCodeAt(0)] = 1
  else NAME_LAST[suffix.charCodeAt(suffix.length - 1)] = 1
}
for (const name of ALWAYS_IGNORED_NAMES) {
  NAME_FIRST[name.charCodeAt(0)] = 1
  NAME_LAST[name.charCodeAt(name.length - 1)] = 1
}
for (const name of ALWAYS_IGNORED_FOLDERS) {
  FOLDER_FIRST[name.charCodeAt(0)] = 1
  FOLDER_LAST[name.charCodeAt(name.length - 1)] = 1
}

/** The character's code, lower-cased for A-Z (gitignore ignores case). */
function lowerCode(text: string, index: number): number {
  const code = text.charCodeAt(index)
  return code >= 65 && code <= 90 ? code + 32 : code
}

function ignoredName(name: string): boolean {
  if (ALWAYS_IGNORED_NAMES.has(name)) return true
  for (const [prefix, suffix] of ALWAYS_IGNORED_GLOBS) {
    if (name.length >= prefix.length + suffix.length && name.startsWith(prefix) && name.endsWith(suffix))
      return true
  }
  return false
}

/** Whether ALWAYS_IGNORED ignores a plain relative path (exported for the test that holds it to them). */
export function alwaysIgnored(plainPath: string, isDir: boolean): boolean {
  for (let start = 0; start < plainPath.length; ) {
    const slash = plainPath.indexOf('/', start)
    const end = slash === -1 ? plainPath.length : slash
    const first = lowerCode(plainPath, start)
    const last = lowerCode(plainPath, end - 1)
    const maybeName = NAME_FIRST[first] === 1 || NAME_LAST[last] === 1
    const maybeFolder = (slash !== -1 || isDir) && FOLDER_FIRST[first] === 1 && FOLDER_LAST[last] === 1
    if (maybeName || maybeFolder) {
      const segment = plainPath.slice(start, end).toLowerCase()
      if (ignoredName(segment) || (maybeFolder && ALWAYS_IGNORED_FOLDERS.has(segment))) return true
    }
    if (slash === -1) break
    start = slash + 1
  }
  return false
}

// write-file-atomic (which our executor and many tools use) writes `<name>.<uint32>` and renames
// it over `<name>`; the number is printed without leading zeros, so a real file such as
// `archive.tar.001` is not mistaken for one. It needs an extension before the number.
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
  /** The user's patterns as read from .cmsyncignore (for messages and `doctor`). */
  readonly userPatterns: readonly string[]
}

/** The rules last loaded: `watch` loads them for every run, and the user's remember their answers. */
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

/** Answers of the user's rules remembered per rules object; past this many the memory starts afresh. */
const MAX_REMEMBERED = 100_000

/** The same rules from a text already read, for tests and callers that hold the file. */
export function ignoreRulesFrom(root: string, cmsyncignoreText: string): IgnoreRules {
  const userPatterns = cmsyncignoreText
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line !== '' && !line.startsWith('#'))
  // The user's rules alone, unless one of them re-includes ('!') what the built-in ones ignore:
  // then the two go through `ignore` together, in order, as gitignore reads them.
  const negates = userPatterns.some((pattern) => pattern.startsWith('!'))
  const matcher: Ignore | undefined = negates
    ? ignore().add(ALWAYS_IGNORED).add(userPatterns)
    : userPatterns.length > 0
      ? ignore().add(userPatterns)
      : undefined
  const absoluteRoot = path.resolve(root)
  const remembered = matcher ? new Map<string, boolean>() : undefined

  return {
    userPatterns,
    ignores(relPath: string, isDir = false): boolean {
      // The built-in rules decide faster than a map lookup; the `ignore` package does not. A
      // full run asks about every path of the workspace, and watch runs one every few seconds.
      if (remembered === undefined) return decide(relPath, isDir)
      const key = isDir ? `${relPath}\0d` : relPath
      let verdict = remembered.get(key)
      if (verdict === undefined) {
        verdict = decide(relPath, isDir)
        if (remembered.size >= MAX_REMEMBERED) remembered.clear()
        remembered.set(key, verdict)
      }
      return verdict
    },
  }

  function decide(relPath: string, isDir: boolean): boolean {
    const normalized = normalizeRelative(absoluteRoot, relPath)
    if (normalized === undefined) return true // outside the workspace: never ours to sync
    if (normalized.path === '') return false
    const asDir = isDir || normalized.trailingSlash
    if (!asDir && endsInDigit(normalized.path)) {
      const name = path.posix.basename(normalized.path)
      if (ATOMIC_WRITER_TEMP.test(name) || name === VIM_WRITE_PROBE) return true
    }
    if (!negates && alwaysIgnored(normalized.path, asDir)) return true
    // `ignore` matches directory patterns ('drafts/') only against a path ending in '/'.
    return matcher?.ignores(asDir ? `${normalized.path}/` : normalized.path) ?? false
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
