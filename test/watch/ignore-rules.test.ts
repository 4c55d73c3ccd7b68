import path from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  ignoreRulesFrom,
  isSyncedPath,
  keepTracked,
  loadIgnoreRules,
} from '../../src/workspace/ignore-rules.js'
import { tempWorkspace } from './helpers.js'

const root = path.resolve('/ws')
const rules = ignoreRulesFrom(root, '# comment\ndrafts/\n*.bak\n!keep.bak\n/media/raw\n')
// Without a '!' nothing re-includes what the built-in rules ignore.
const plainRules = ignoreRulesFrom(root, 'drafts/\n*.bak\n/media/raw\n')

const CASES: [string, boolean, boolean?][] = [
  ['.cms-sync/state.json', true],
  ['.cms-sync', true, true],
  ['.git/HEAD', true],
  ['media/node_modules/x.js', true],
  ['content/.home.json.swp', true],
  ['content/.home.json.swo', true],
  ['content/home.json.swx', true],
  ['content/home.json~', true],
  ['content/.#home.json', true],
  ['content/#home.json#', true],
  ['media/.DS_Store', true],
  ['media/Thumbs.db', true],
  ['content/home.json.tmp', true],
  ['content/.home.json.tmp', true],
  ['content/home.json.2739148261', true], // write-file-atomic
  ['media/logo.svg.0', true],
  ['content/4913', true], // vim's write probe
  ['media/4913', false, true], // ...but a folder of that name is synced
  ['media/archive.tar.001', false], // split archives have leading zeros; temp names never do
  ['media/release.1.2', false, true],
  ['media/v2', false],
  ['content/home.json', false],
  ['media/photos/a.png', false],
  // the user's .cmsyncignore
  ['content/drafts', true, true],
  ['content/drafts/x.json', true],
  ['content/drafts', false], // 'drafts/' only matches a folder, as in git
  ['content/old.bak', true],
  ['content/keep.bak', false],
  ['media/raw/x.png', true],
  ['content/media/raw/x.png', false], // anchored pattern
]

describe('ignore rules', () => {
  test.each(CASES)('%s (dir: %s) ignored: %s', (rel, expected, isDir = false) => {
    expect(rules.ignores(rel, isDir)).toBe(expected)
  })

  test.each(CASES)('without a negation: %s (dir: %s) ignored: %s', (rel, expected, isDir = false) => {
    expect(plainRules.ignores(rel, isDir)).toBe(rel === 'content/keep.bak' ? true : expected)
  })

  test("a user's '!' can take back what a built-in rule ignores", () => {
    const keeps = ignoreRulesFrom(root, '!keep.tmp\n')
    expect(keeps.ignores('content/keep.tmp')).toBe(false)
    expect(keeps.ignores('content/other.tmp')).toBe(true)
    expect(keeps.ignores('.cms-sync/state.json')).toBe(true)
  })

  test("'', '.', './x', a trailing '/', backslashes and absolute paths do not throw", () => {
    expect(rules.ignores('')).toBe(false)
    expect(rules.ignores('.')).toBe(false)
    expect(rules.ignores('./')).toBe(false)
    expect(rules.ignores('./content/drafts/x.json')).toBe(true)
    expect(rules.ignores('content/drafts/')).toBe(true) // a trailing '/' says it is a folder
    expect(rules.ignores('content\\drafts\\x.json')).toBe(true)
    expect(rules.ignores(path.join(root, 'content/drafts/x.json'))).toBe(true)
    expect(rules.ignores(path.join(root, 'content/home.json'))).toBe(false)
    expect(rules.ignores(root)).toBe(false)
    expect(rules.ignores(path.resolve('/elsewhere/x.json'))).toBe(true) // outside: never synced
    expect(rules.ignores('../x.json')).toBe(true)
  })

  test('loadIgnoreRules reads .cmsyncignore at the root, and works without one', async () => {
    const withFile = await tempWorkspace({ '.cmsyncignore': 'secret/\n' })
    const loaded = await loadIgnoreRules(withFile)
    expect(loaded.userPatterns).toEqual(['secret/'])
    expect(loaded.ignores('content/secret/a.json')).toBe(true)
    const without = await loadIgnoreRules(await tempWorkspace())
    expect(without.userPatterns).toEqual([])
    expect(without.ignores('content/a.json')).toBe(false)
    expect(without.ignores('.cms-sync/state.json')).toBe(true)
  })
})

describe('the built-in rules answered without the ignore library', () => {
  // A '!' that matches nothing puts every rule in the library's one matcher, in gitignore's
  // order: the reference the character tests must equal, name for name.
  const NEVER = '\n!zz-matches-nothing'
  const prefixes = ['', '.', '#', '.#', '.~lock.', '~', 'a', 'A.', '..']
  const stems = ['', 'home.json', 'x', 'DS_Store', 'Thumbs', '.git', 'node_modules', 'sw']
  const endings = [
    '',
    '.swp',
    '.SWP',
    '.swa',
    '.swP',
    '.swq',
    '.swo',
    '.sw',
    '~',
    '#',
    '.tmp',
    '.TMP',
    '.tmp.json',
    '___jb_tmp___',
    '___JB_old___',
    '.json',
    '.swx',
    '.db',
    '.ini',
  ]
  const specials = [
    '.DS_Store',
    '.ds_store',
    'Thumbs.db',
    'THUMBS.DB',
    'desktop.ini',
    'Desktop.INI',
    '.git',
    '.GIT',
    'node_modules',
    'Node_Modules',
    '.cms-sync',
    '.CMS-SYNC',
    '#',
    '##',
    '.~lock.#',
    '.~lock.x#',
    '..swa',
    '.swa',
    '.a.swa',
    '.#',
    '.',
  ]
  const names = [...specials]
  for (const prefix of prefixes)
    for (const stem of stems) for (const ending of endings) names.push(`${prefix}${stem}${ending}`)
  const paths: [string, boolean][] = []
  for (const name of new Set(names.filter((n) => n !== '' && n !== '.' && n !== '..'))) {
    paths.push([`content/${name}`, false], [`media/${name}`, true], [`media/${name}/a.png`, false])
    paths.push([`media/photos/${name}`, false], [`${name}/content/a.json`, false])
  }

  test.each([
    ['no .cmsyncignore', ''],
    ['a .cmsyncignore without a negation', 'drafts/\n*.bak\n/media/raw'],
  ])('%s: every generated name is ignored as the library ignores it', (_what, text) => {
    const fast = ignoreRulesFrom(root, text)
    const reference = ignoreRulesFrom(root, text + NEVER)
    const differ = paths.filter(([rel, isDir]) => fast.ignores(rel, isDir) !== reference.ignores(rel, isDir))
    expect(differ).toEqual([])
    const differByChoice = paths.filter(
      ([rel, isDir]) => fast.ignoresByChoice(rel, isDir) !== reference.ignoresByChoice(rel, isDir),
    )
    expect(differByChoice).toEqual([])
    expect(paths.some(([rel, isDir]) => reference.ignoresByChoice(rel, isDir))).toBe(true)
    expect(paths.length).toBeGreaterThan(5000)
    // Both answers occur: the comparison is not of two constant functions.
    const ignored = paths.filter(([rel, isDir]) => reference.ignores(rel, isDir)).length
    expect(ignored).toBeGreaterThan(paths.length / 4)
    expect(ignored).toBeLessThan(paths.length)
  })
})

describe('built-in junk rules and the paths a sync tracks', () => {
  test("a junk-looking path the server has is synced (and its folders walked); the user's rules still hold", () => {
    const tracking = path.resolve('/ws-tracked')
    const r = ignoreRulesFrom(tracking, '*.bak\n')
    const tracked = ['media/notes.tmp', 'media/x.tmp/Thumbs.db', 'media/budget.xlsx.1', 'media/old.bak']
    for (const p of tracked) expect(r.ignores(p), p).toBe(true)
    keepTracked(tracking, tracked)
    try {
      expect(r.ignores('media/notes.tmp')).toBe(false)
      expect(r.ignores('media/budget.xlsx.1')).toBe(false)
      expect(r.ignores('media/x.tmp', true)).toBe(false)
      expect(r.ignores('media/x.tmp/Thumbs.db')).toBe(false)
      // Chosen by the user: ignored whatever the server has
      expect(r.ignores('media/old.bak')).toBe(true)
      expect(r.ignoresByChoice('media/old.bak')).toBe(true)
      expect(r.ignoresByChoice('media/other.tmp')).toBe(false)
      // Local junk nobody tracks stays ignored, in this workspace and in any other
      expect(r.ignores('media/draft.tmp')).toBe(true)
      expect(ignoreRulesFrom(root, '').ignores('media/notes.tmp')).toBe(true)
    } finally {
      keepTracked(tracking, [])
    }
    expect(r.ignores('media/notes.tmp')).toBe(true)
  })
})

describe('isSyncedPath', () => {
  test.each([
    ['schemas/page.json', true],
    ['content/home.json', true],
    ['media/a/b.png', true],
    ['forms/contact.json', true],
    ['connections/git.json', true],
    ['content', true],
    ['./media.yaml', true],
    ['media.yaml', true],
    ['cms-sync.yaml', false],
    ['README.md', false],
    ['docs/content/x.json', false],
    ['', false],
    ['../content/x.json', false],
    ['mediafile.png', false],
  ])('%s: %s', (rel, expected) => {
    expect(isSyncedPath(rel)).toBe(expected)
  })
})
