// The base of an item from git (src/workspace/git-base.ts), found by value: the committed text
// may hold the base's value in another key order than the one its hash was taken of. Real git,
// a real temp repository.

import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { canonicalJson, sortedJson } from '../../src/workspace/canonical-json.js'
import { hashText, type JsonObject } from '../../src/workspace/codec.js'
import { contentCodec } from '../../src/workspace/content-codec.js'
import { baseTextFromGit, committedSyncFiles } from '../../src/workspace/git-base.js'

const SERVER_ORDER: JsonObject = {
  id: 'news',
  schemaId: 'section',
  properties: { title: 'News', intro: 'Hello', body: 'Text' },
  sort: 1,
}

async function repoWith(text: string): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-git-base-'))
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {
      cwd: root,
      stdio: 'pipe',
    })
  git('init', '-q')
  await mkdir(path.join(root, 'content'))
  await writeFile(path.join(root, 'content', 'news.json'), text)
  git('add', '-A')
  git('commit', '-qm', 'committed')
  return root
}

test('a sorted-keys file in git is the base whose hash is of the server order, given that order', async () => {
  const root = await repoWith(sortedJson(SERVER_ORDER))
  const hash = hashText(canonicalJson(SERVER_ORDER))
  // The remote still holds that order (with an edit elsewhere): the base is found, in its order
  const remote = { ...SERVER_ORDER, sort: 5 }
  const text = await baseTextFromGit(root, 'content/news.json', hash, contentCodec, 'news', [remote])
  expect(text).toBe(canonicalJson(SERVER_ORDER))
  // Without an order to try, the text alone does not match
  expect(await baseTextFromGit(root, 'content/news.json', hash, contentCodec, 'news', [])).toBeUndefined()
})

test('a server-order file in git is the base whose hash a version-1 state took of the sorted form', async () => {
  const root = await repoWith(canonicalJson(SERVER_ORDER))
  const hash = hashText(sortedJson(SERVER_ORDER))
  expect(await baseTextFromGit(root, 'content/news.json', hash, contentCodec, 'news')).toBe(
    sortedJson(SERVER_ORDER),
  )
})

test('another value is never taken for the base, whatever its order', async () => {
  const root = await repoWith(sortedJson({ ...SERVER_ORDER, sort: 2 }))
  const hash = hashText(canonicalJson(SERVER_ORDER))
  expect(
    await baseTextFromGit(root, 'content/news.json', hash, contentCodec, 'news', [SERVER_ORDER]),
  ).toBeUndefined()
})

test('git never starts in the workspace: a git.exe committed there is what Windows would run', async () => {
  // Windows looks for a bare program name in the working folder before PATH (libuv's
  // search_path), so git started in the workspace runs a `git.exe` a pull request committed
  // there, on the runner, beside the process that holds the token. Here a `git` first on PATH records the folder it starts in, then runs the real one.
  const root = await repoWith(canonicalJson(SERVER_ORDER))
  const bin = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-git-cwd-'))
  const record = path.join(bin, 'started-in')
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim()
  await writeFile(path.join(bin, 'git'), `#!/bin/sh\npwd >> '${record}'\nexec '${real}' "$@"\n`, {
    mode: 0o755,
  })
  const before = process.env.PATH
  process.env.PATH = `${bin}${path.delimiter}${before}`
  try {
    const hash = hashText(sortedJson(SERVER_ORDER))
    // The base is still found: only where git starts changed, not what it reads.
    expect(await baseTextFromGit(root, 'content/news.json', hash, contentCodec, 'news')).toBe(
      sortedJson(SERVER_ORDER),
    )
  } finally {
    process.env.PATH = before
  }
  const folders = (await readFile(record, 'utf8')).split('\n').filter(Boolean)
  expect(folders.length).toBeGreaterThan(0)
  // Git's own .git folder is fine: no checkout ever writes there.
  const checkedOut = (folder: string) => {
    const rel = path.relative(root, folder)
    return !rel.startsWith('..') && rel.split(path.sep)[0] !== '.git'
  }
  expect(folders.filter(checkedOut)).toEqual([])
})

test('.cms-sync/ committed in any case is found: a case-insensitive checkout reads .CMS-Sync/ as .cms-sync/', async () => {
  const root = await repoWith(canonicalJson(SERVER_ORDER))
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {
      cwd: root,
      stdio: 'pipe',
    })
  // This machine's own folder (untracked), and a pull request's spelling of it (committed).
  await mkdir(path.join(root, '.cms-sync', 'logs'), { recursive: true })
  await mkdir(path.join(root, '.CMS-Sync'))
  await writeFile(path.join(root, '.CMS-Sync', 'state.json'), '{}')
  git('add', '.CMS-Sync')
  git('commit', '-qm', 'pull request')
  expect(await committedSyncFiles(root)).toEqual(['.CMS-Sync/state.json'])
})
