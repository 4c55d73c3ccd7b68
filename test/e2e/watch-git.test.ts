// Mass changes on a small site, and git's operations seen as what they are: a 25-item site in a
// real git repository (the workspace in a subfolder of it), watched. A branch switch is a pause
// that names the branch, never a push; a `sed` over every page pauses too (either threshold
// trips it); restoring what the pause held (`git checkout -- .`, `git stash`, switching back)
// lifts it; two or three files saved at once are ordinary edits.

import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { startWorld, type World } from '../helpers/sync-world.js'
import { serverTitle, setWatchConfig, watchInProcess } from '../helpers/watch.js'
import { waitFor } from '../watch/helpers.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** git with no system or user configuration, nothing of the machine's. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
    cwd,
    stdio: 'pipe',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd, GIT_CONFIG_GLOBAL: '/dev/null' },
  }).toString()
}

const IDS = Array.from({ length: 24 }, (_, i) => `page-${String(i).padStart(2, '0')}`)

/** 24 pages and a schema, synced, committed on `main` in a repository whose subfolder `site/` is the workspace. */
async function siteInGit(): Promise<{ w: World; repo: string }> {
  const w = await startWorld('upstream', { content: IDS })
  cleanups.push(() => w.close())
  const first = await w.cli('sync')
  if (first.exitCode !== 0) throw new Error(first.stderr)
  await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 1 })
  const repo = path.dirname(w.root)
  await writeFile(path.join(repo, '.gitignore'), 'xdg/\nsite/.cms-sync/\n')
  git(repo, 'init', '-q', '-b', 'main')
  git(repo, 'add', '.')
  git(repo, 'commit', '-qm', 'site')
  return { w, repo }
}

async function watched(w: World) {
  const d = watchInProcess(w.root, w.env)
  cleanups.push(() => d.stop())
  await d.waitForEvent({ event: 'reconciled' })
  return d
}

const titles = async (w: World) => Promise.all(IDS.map((id) => serverTitle(w.server, id)))

describe('watch and git', () => {
  test('git checkout of another branch is a pause naming the branch, never a push; switching back lifts it', async () => {
    const { w, repo } = await siteInGit()
    git(repo, 'checkout', '-q', '-b', 'other')
    for (const id of IDS) await w.editJson(`content/${id}.json`, { properties: { title: `${id} on other` } })
    git(repo, 'commit', '-qam', 'other')
    git(repo, 'checkout', '-q', 'main')
    const before = await titles(w)
    const d = await watched(w)

    git(repo, 'checkout', '-q', 'other')
    const paused = await d.waitForEvent({ event: 'paused' }, 10_000)
    expect(paused).toMatchObject({ reason: 'branch-switch', branch: 'other', fromBranch: 'main', count: 24 })
    // A poll planned everything while paused: it tells what the pause holds, pushes nothing.
    await waitFor(
      () =>
        d.events.some(
          (e) => e.event === 'held' && e.held[0]?.guard === 'branch-switch' && e.held[0].count === 24,
        ),
      { what: 'the pause held with its 24 paths', timeoutMs: 10_000 },
    )
    const status = await w.cli('--json', 'status')
    expect(status.json.watchPaused).toMatchObject({ reason: 'branch-switch', branch: 'other' })
    expect(status.json.held).toEqual([
      expect.objectContaining({ guard: 'branch-switch', count: 24, drop: 'git checkout main' }),
    ])

    git(repo, 'checkout', '-q', 'main')
    await d.waitForEvent({ event: 'resumed' }, 10_000)
    expect(d.events.filter((e) => e.event === 'pushed')).toEqual([])
    expect(await titles(w)).toEqual(before)
    expect(await w.exists('.cms-sync/watch-paused.json')).toBe(false)
  })

  test('a sed over every page of a 25-item site pauses; git checkout -- . restores the files and lifts it', async () => {
    const { w, repo } = await siteInGit()
    const before = await titles(w)
    const d = await watched(w)

    // One sed per file, as a script would do it, no git involved.
    execFileSync(
      'sh',
      ['-c', 'for f in content/*.json; do sed -i "s/\\"title\\": \\"/\\"title\\": \\"draft /" "$f"; done'],
      {
        cwd: w.root,
      },
    )
    const paused = await d.waitForEvent({ event: 'paused' }, 10_000)
    expect(paused).toMatchObject({ reason: 'mass-change' })
    expect(paused.count).toBeGreaterThanOrEqual(24)

    git(repo, 'checkout', '--', '.')
    await d.waitForEvent({ event: 'resumed' }, 10_000)
    expect(d.events.filter((e) => e.event === 'pushed')).toEqual([])
    expect(await titles(w)).toEqual(before)
  })

  test('git stash of what a pause held lifts it', async () => {
    const { w, repo } = await siteInGit()
    const before = await titles(w)
    const d = await watched(w)
    for (const id of IDS.slice(0, 8))
      await w.editJson(`content/${id}.json`, { properties: { title: `${id} bulk` } })
    await d.waitForEvent({ event: 'paused' }, 10_000)
    git(repo, 'stash', '-q')
    await d.waitForEvent({ event: 'resumed' }, 10_000)
    expect(d.events.filter((e) => e.event === 'pushed')).toEqual([])
    expect(await titles(w)).toEqual(before)
  })

  test('two or three files saved at once are edits: pushed, no pause', async () => {
    const { w } = await siteInGit()
    const d = await watched(w)
    await Promise.all(
      IDS.slice(0, 3).map((id) =>
        w.editJson(`content/${id}.json`, { properties: { title: `${id} edited` } }),
      ),
    )
    for (const id of IDS.slice(0, 3)) await d.waitForEvent({ event: 'pushed', path: `content/${id}.json` })
    expect(d.events.filter((e) => e.event === 'paused')).toEqual([])
    expect(await serverTitle(w.server, IDS[0]!)).toBe(`${IDS[0]} edited`)
  })
})
