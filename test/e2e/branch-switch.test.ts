// A `git checkout` of an older commit puts older files and an older cms-sync.lock in the
// workspace, while the state here remembers the newer last sync and the server holds it. Nobody
// can tell which side is meant, so the item is a conflict; the conflict says why (the committed
// lock is older than the last sync here) and what each way out does, and both ways work.

import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { syncedWorld, type World } from '../helpers/sync-world.js'
import { serverTitle } from '../helpers/watch.js'

let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

const title = async (w: World, rel: string) => ((await w.readJson(rel)).properties as { title: string }).title

describe.each(['spec', 'upstream'] as const)('a checkout of an older commit (%s dialect)', (dialect) => {
  test('status says the lock is older than the last sync here, and what each choice does', async () => {
    const w = await syncedWorld(dialect)
    world = w
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], {
        cwd: w.root,
        encoding: 'utf8',
      })
    await writeFile(w.file('.gitignore'), '.cms-sync/\n')
    git('init', '-q')
    git('add', '-A')
    git('commit', '-qm', 'first sync')
    // The newer commit: one edit pushed from here, one pulled from the server.
    await w.editJson('content/home.json', { properties: { title: 'Home, second version' } })
    expect((await w.cli('push')).exitCode).toBe(0)
    await w.setContent('news', { properties: { title: 'News, second version' } })
    expect((await w.cli('pull')).exitCode).toBe(0)
    git('commit', '-qam', 'second sync')
    git('checkout', '-q', 'HEAD~1')

    const status = await w.cli('status')
    expect(status.exitCode).toBe(3)
    for (const rel of ['content/home.json', 'content/news.json']) {
      const block = status.stdout.slice(status.stdout.indexOf(rel)).split(/\n {2}\S/)[0]!
      expect(block).toMatch(/cms-sync.lock is older than the last sync here/)
      expect(block).toMatch(/git checkout|branch/)
      expect(block).toMatch(
        new RegExp(`cms-sync resolve ${rel} --keep local\` sends the checked-out version`),
      )
      expect(block).toMatch(new RegExp(`cms-sync restore ${rel}\` takes the server's`))
    }
    const json = await w.cli('--json', 'status')
    expect(json.json.changes).toHaveLength(2)
    for (const change of json.json.changes) expect(change.reason).toMatch(/older than the last sync here/)

    // Each way out does what it said.
    const keep = await w.cli('resolve', 'content/home.json', '--keep', 'local')
    expect(keep.exitCode, keep.stderr).toBe(0)
    expect(await serverTitle(w.server, 'home')).toBe('home')
    const restore = await w.cli('restore', 'content/news.json')
    expect(restore.exitCode, restore.stderr).toBe(0)
    expect(await title(w, 'content/news.json')).toBe('News, second version')
    expect((await w.cli('status')).exitCode).toBe(0)
  })
})
