// A base's text from git, for a workspace whose .cms-sync/bases/ lacks it: a fresh clone or a
// CI checkout (its base hashes come from the committed cms-sync.lock), or a workspace synced
// before bases were kept. The file's committed versions are walked newest first, and the one
// whose value is the base's is the base. Only items changed on both sides ask, so a run where
// nothing changed on both sides never starts git.
//
// A value, not a text: the base hash is of one key order (the server's; sorted keys for a base a
// version-1 state recorded), and the committed text may hold the same value in another (a file
// the sorted-keys version wrote, committed before its item was synced again). Key order alone
// must never hide the base, which would turn a mergeable edit into a conflict.
//
// Git runs only against the repository that holds the workspace, found by its `.git` (git never
// checks out a path named `.git`, so no commit can plant one), never by git's own discovery: a
// folder holding HEAD, objects/ and refs/ is a bare repository to git, and a pull request can
// commit one into the workspace, with a config that runs its script (gpg.program with
// log.showSignature, core.fsmonitor, hooks). The repository's own config is the runner's, not the
// pull request's; still nothing in any config may run a program here, and git's environment
// holds no token or secret.

import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { lstatSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { CliError, ExitCode } from '../errors/exit-codes.js'
import { sortedJson } from './canonical-json.js'
import { type Codec, fileBytes, type JsonObject, sortedHash } from './codec.js'
import { orderLike } from './key-order.js'
import { parseFileText } from './local-file.js'

const run = promisify(execFile)

/** How far back a file's history is searched: a base is normally the last commit or so. */
const MAX_VERSIONS = 50

/** The repository that holds `root`: the nearest folder at or above it with a `.git` (a folder or a gitlink file). */
export function enclosingRepository(root: string): { gitDir: string; workTree: string } | undefined {
  for (let dir = path.resolve(root); ; dir = path.dirname(dir)) {
    const dotGit = path.join(dir, '.git')
    try {
      const info = lstatSync(dotGit)
      if (info.isDirectory() || info.isFile()) return { gitDir: dotGit, workTree: dir }
    } catch {
      // None here: one folder up.
    }
    if (path.dirname(dir) === dir) return undefined
  }
}

/**
 * Settings given on the command line outrank every config file: none of these may run a program
 * or read a repository git was not pointed at.
 */
const SAFE_CONFIG = [
  'safe.bareRepository=explicit',
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'log.showSignature=false',
  'core.pager=cat',
  'protocol.allow=never',
].flatMap((setting) => ['-c', setting])

/**
 * git's environment: enough to find git and the user's own config, nothing else. No token, no
 * connection secret, and no GIT_* variable that could point it at another repository or program.
 */
function gitEnv(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'SYSTEMROOT', 'XDG_CONFIG_HOME']
  const env: NodeJS.ProcessEnv = {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
  }
  for (const name of keep) if (process.env[name] !== undefined) env[name] = process.env[name]
  return env
}

async function git(root: string, args: string[]): Promise<string | undefined> {
  const repo = enclosingRepository(root)
  if (!repo) return undefined
  try {
    // Started outside the workspace, then told where to work (-C): Windows looks for a bare
    // program name in the starting folder before PATH, and a pull request can commit a git.exe
    // there. The .git folder is git's own (never checked out); a gitlink file is not a folder.
    const startIn = lstatSync(repo.gitDir).isDirectory() ? repo.gitDir : tmpdir()
    const { stdout } = await run(
      'git',
      ['-C', root, ...SAFE_CONFIG, `--git-dir=${repo.gitDir}`, `--work-tree=${repo.workTree}`, ...args],
      { cwd: startIn, env: gitEnv(), maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
    )
    return stdout
  } catch {
    // No git, an unknown path, a repository git refuses: no base from git.
    return undefined
  }
}

/**
 * The text, in the key order `hash` was taken of, of the committed value that hashes to `hash`
 * in its own order, in sorted order, or in the order of one of `orders`; the text of the first
 * version found, newest first. Undefined when no version holds that value.
 */
export function matchingText(
  file: JsonObject,
  ownText: string,
  ownHash: string,
  hash: string,
  orders: readonly JsonObject[],
): string | undefined {
  if (ownHash === hash) return ownText
  if (sortedHash(file) === hash) return sortedJson(file)
  for (const order of orders) {
    const bytes = fileBytes(orderLike(file, order))
    if (bytes.hash === hash) return bytes.text
  }
  return undefined
}

/**
 * The blob ids of `relativePath` in the last commits that touched it, newest first (each commit's
 * version after and before it): what a committed base is looked up in. Empty without git.
 */
async function committedBlobs(root: string, relativePath: string): Promise<string[]> {
  const log = await git(root, [
    'log',
    '--no-show-signature',
    '--no-ext-diff',
    '--no-textconv',
    '--format=',
    '--raw',
    '--no-abbrev',
    '--no-renames',
    `-n${MAX_VERSIONS}`,
    '--',
    relativePath.split('/').join(path.sep),
  ])
  const blobs = new Set<string>()
  for (const line of log?.split('\n') ?? []) {
    // :<old mode> <new mode> <old blob> <new blob> <status>\t<path>
    const fields = line.split('\t')[0]!.split(' ')
    for (const blob of [fields[3], fields[2]])
      if (blob && /^[0-9a-f]{40,64}$/.test(blob) && !/^0+$/.test(blob)) blobs.add(blob)
  }
  return [...blobs]
}

/**
 * The base text of `relativePath` from its committed versions (see matchingText), or undefined.
 * `relativePath` is workspace-relative; the workspace may be a folder of the repo.
 */
export async function baseTextFromGit(
  root: string,
  relativePath: string,
  hash: string,
  codec: Codec,
  id: string,
  orders: readonly JsonObject[] = [],
): Promise<string | undefined> {
  for (const blob of await committedBlobs(root, relativePath)) {
    const text = await git(root, ['cat-file', 'blob', blob])
    if (text === undefined) continue
    const parsed = parseFileText(codec, text, id)
    if (!parsed.ok) continue
    const match = matchingText(parsed.file, parsed.text, parsed.hash, hash, orders)
    if (match !== undefined) return match
  }
  return undefined
}

/** Git's object id of a blob holding `bytes`, in both object formats (sha1, sha256). */
function blobIds(bytes: Buffer): string[] {
  const header = Buffer.from(`blob ${bytes.length}\0`)
  return ['sha1', 'sha256'].map((algorithm) =>
    createHash(algorithm).update(header).update(bytes).digest('hex'),
  )
}

/**
 * Whether some commit of `relativePath` held exactly the bytes of `file` (a media file's server
 * copy, just downloaded): a base cms-sync.lock gives is trusted only where history agrees. The
 * bytes are compared as git names them (the blob id), so no binary content passes through git's
 * output. False when there is no repository or no such version.
 */
export async function historyHoldsBytes(root: string, relativePath: string, file: string): Promise<boolean> {
  const wanted = new Set(blobIds(await readFile(file)))
  for (const blob of await committedBlobs(root, relativePath)) if (wanted.has(blob)) return true
  return false
}

/**
 * Why git gave no base, when it is the history's fault: a shallow clone (a CI checkout's default)
 * holds only its last commits, and a base committed before them is not there. Undefined when the
 * history is whole (the base was then never committed, or the lock names a version git lacks).
 */
export async function missingHistory(root: string): Promise<string | undefined> {
  const shallow = await git(root, ['rev-parse', '--is-shallow-repository'])
  if (shallow?.trim() !== 'true') return undefined
  return 'this is a shallow clone, whose history stops before the base: deepen it (`git fetch --unshallow`; in GitHub Actions `fetch-depth: 0` on actions/checkout) and run again'
}

/**
 * The files under `.cms-sync/` that git tracks (workspace-relative), when the workspace is in a
 * repository. That folder is this machine's own record (the state, its bases, the journals, kept
 * listings): a commit that holds it hands every clone and every CI checkout bases a pull request
 * wrote, which would make a push delete or overwrite server items on their word alone.
 */
export async function committedSyncFiles(root: string): Promise<string[]> {
  if (lstatSync(path.join(root, '.cms-sync'), { throwIfNoEntry: false }) === undefined) return []
  // In any case: a case-insensitive checkout (macOS, Windows) reads a committed .CMS-Sync/ as ours.
  const listed = await git(root, ['ls-files', '-z', '--', ':(icase).cms-sync'])
  if (!listed) return []
  return listed.split('\0').filter((name) => name !== '')
}

/**
 * A `.cms-sync/` that git tracks is refused before anything in it is read (exit 2): a commit (a
 * pull request, in a CI checkout that otherwise has no state) could write a state naming any
 * server item at its current revision, and the missing file would be a local delete; or a push
 * journal, a media id, a kept listing. A checkout also overwrites the ignored state of a person's
 * workspace with a branch's, and the state's server is the binding a token relies on outside CI.
 * Only the lock is a committed base, and it is checked as one.
 */
export async function refuseCommittedSyncDir(root: string): Promise<void> {
  const files = await committedSyncFiles(root)
  if (files.length === 0) return
  const first =
    ['.cms-sync/state/index.json', '.cms-sync/state.json'].find((file) => files.includes(file)) ?? files[0]!
  const named = /^[\w./-]+$/.test(first) ? first : JSON.stringify(first)
  const more = files.length > 1 ? ` and ${files.length - 1} more file(s) under .cms-sync/` : ''
  throw new CliError(
    `${named}${more} is committed to the repository: .cms-sync/ is this machine's own record of the last sync, and a committed one could name any server item as synced (a pull request could make a push delete or overwrite it). Nothing was read from it and nothing was changed: remove it from the repository and from this folder, since a checkout put the commit's files in place of this machine's (\`git rm -r --cached .cms-sync && rm -rf .cms-sync\`, then commit; the next sync starts over from cms-sync.lock as a fresh clone does, which never deletes), and keep \`.cms-sync/\` in .gitignore`,
    ExitCode.usage,
  )
}
