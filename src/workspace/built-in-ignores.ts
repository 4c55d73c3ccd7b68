// The rules cms-sync ignores by itself, before any `.cmsyncignore`: as gitignore patterns (for
// the `ignore` library, which must see them when a user's '!' re-includes one), and as the
// character tests that answer them for every path of a run without it. The two must agree
// name for name: test/watch/ignore-rules.test.ts compares them on generated names.

/** Local state, version control and tooling: never resources, whatever the server holds. */
export const NEVER_RESOURCES = ['.cms-sync/', '.git/', 'node_modules/']

/**
 * Local junk: the temp and backup files editors and tools leave for a moment, and operating
 * system litter. These rules keep such files from being uploaded; they never hide what the
 * server has: a path a sync tracks (a server media item named `notes.tmp`, see
 * keepTracked) is synced like any other.
 */
export const LOCAL_JUNK = [
  // vim: swap files (.x.json.swp, .swo, ...) and backups; its '4913' probe is matched apart.
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

// As the `ignore` library reads the lists above: case-insensitive (its default), and a pattern
// with no '/' but a trailing one matches a name at any depth, a folder's name only when it ends
// in '/'; a folder that matches takes everything in it along.
const NEVER_RESOURCE_NAMES = new Set(NEVER_RESOURCES.map((rule) => rule.slice(0, -1).toLowerCase()))
const LITTER = new Set(['.ds_store', 'thumbs.db', 'desktop.ini'])
const JUNK_ENDINGS = ['.swp', '.swx', '~', '.tmp', '___jb_tmp___', '___jb_old___']
const JUNK_LAST = new Set(['p', 'P', 'x', 'X', '~', '_', 'e', 'E', 'b', 'B', 'i', 'I'])

/** Whether one file or folder name is local junk (LOCAL_JUNK). */
function isJunkName(name: string): boolean {
  // Every junk pattern begins with '.' or '#', or ends in one of these (p, x, ~, _) or names
  // litter (e, b, i); a name that does neither (a.json, photo.png) is settled here.
  const first = name.charCodeAt(0)
  if (first !== 46 /* . */ && first !== 35 /* # */ && !JUNK_LAST.has(name.charAt(name.length - 1)))
    return false
  const n = name.toLowerCase()
  if (LITTER.has(n)) return true
  for (const ending of JUNK_ENDINGS) if (n.endsWith(ending)) return true
  if (first === 35 /* # */) return n.length >= 2 && n.endsWith('#')
  if (first !== 46 /* . */) return false
  if (n.startsWith('.#')) return true
  if (n.startsWith('.~lock.') && n.length >= 8 && n.endsWith('#')) return true
  // .*.sw[a-p]
  const last = n.charCodeAt(n.length - 1)
  return n.length >= 5 && n.endsWith('.sw', n.length - 1) && last >= 97 && last <= 112
}

/**
 * Whether the built-in rules ignore a plain workspace-relative path ('content/a.json', no
 * trailing '/'); `isDir`: the path is a folder; `junk`: the junk rules count (not only the
 * never-a-resource folders).
 */
export function builtInIgnores(plainPath: string, isDir: boolean, junk: boolean): boolean {
  let start = 0
  for (;;) {
    const slash = plainPath.indexOf('/', start)
    const name = slash < 0 ? plainPath.slice(start) : plainPath.slice(start, slash)
    const folder = slash >= 0 || isDir
    const first = name.charCodeAt(0)
    // '.cms-sync', '.git', 'node_modules': a name beginning otherwise is none of them.
    if (folder && (first === 46 || (first | 32) === 110) && NEVER_RESOURCE_NAMES.has(name.toLowerCase()))
      return true
    if (junk && isJunkName(name)) return true
    if (slash < 0) return false
    start = slash + 1
  }
}
