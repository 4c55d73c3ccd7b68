// What CI relies on (design.md "Commands"): `status` exits 1 when an item would fail, 3 with
// conflicts and, with --exit-code, 6 when anything is to sync; `--dry-run` predicts what the run
// would refuse; a path that matches nothing is a usage error; `--json` prints one document even
// when the run stops; a refused token says where it came from.

import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { contentFile, contentOf } from '../helpers/fixtures.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'

describe.each(['spec', 'upstream'] as const)(
  'status and dry runs tell CI the truth (%s dialect)',
  (dialect) => {
    let world: World
    afterEach(async () => world?.close())

    async function synced(): Promise<World> {
      world = await syncedWorld(dialect)
      return world
    }

    test('status --exit-code: 0 when clean, 6 with pending changes, 3 with a conflict', async () => {
      const w = await synced()
      expect((await w.cli('status', '--exit-code')).exitCode).toBe(0)
      await w.editJson('content/home.json', { properties: { title: 'local' } })
      expect((await w.cli('status')).exitCode).toBe(0)
      expect((await w.cli('status', '--exit-code')).exitCode).toBe(6)
      await w.setContent('home', { properties: { title: 'remote' } })
      const conflict = await w.cli('--json', 'status', '--exit-code')
      expect(conflict.exitCode).toBe(3)
      expect((await w.cli('status')).exitCode).toBe(3)
    })

    test('files the push would refuse are failures in status (exit 1), not plain push lines', async () => {
      const w = await synced()
      await writeFile(w.file('content/broken.json'), '{ "id": "broken", ')
      await w.writeJson('content/mismatch.json', contentFile('other-id'))
      await w.writeJson('content/orphan.json', contentFile('orphan', { schemaId: 'no-such-schema' }))
      await w.writeJson('content/lost-child.json', contentFile('lost-child', { parentId: 'no-such-parent' }))
      await w.writeJson('content/new.json', contentFile('new'))
      await w.writeJson('content/child.json', contentFile('child', { parentId: 'new-parent' }))
      await w.writeJson('content/new-parent.json', contentFile('new-parent'))
      const status = await w.cli('--json', 'status')
      expect(status.exitCode).toBe(1)
      expect(status.json.clean).toBe(false)
      const errors = Object.fromEntries(
        status.json.changes.map((c: { path: string; error?: string }) => [c.path, c.error]),
      )
      expect(errors).toEqual({
        'content/broken.json': expect.stringMatching(/invalid JSON/),
        'content/mismatch.json': expect.stringMatching(/"other-id" does not match the file name/),
        'content/orphan.json': expect.stringMatching(/unknown schema "no-such-schema"/),
        'content/lost-child.json': expect.stringMatching(/parent "no-such-parent" is neither on the server/),
        'content/new.json': expect.stringMatching(/a word the server reserves/),
        'content/child.json': undefined,
        'content/new-parent.json': undefined,
      })
      const text = await w.cli('status')
      expect(text.exitCode).toBe(1)
      expect(text.stdout).toMatch(/push \(fails\)\s+content\/broken\.json/)
      expect(text.stdout).toContain('5 would fail')
      // --dry-run predicts the same refusals as the real push
      const dry = await w.cli('--json', 'push', '--dry-run')
      const real = await w.cli('--json', 'push')
      const failedPaths = (run: typeof dry) => run.json.failed.map((f: { path: string }) => f.path).sort()
      expect(dry.exitCode).toBe(1)
      expect(real.exitCode).toBe(1)
      expect(failedPaths(dry)).toEqual(failedPaths(real))
      expect(failedPaths(dry)).toEqual([
        'content/broken.json',
        'content/lost-child.json',
        'content/mismatch.json',
        'content/new.json',
        'content/orphan.json',
      ])
      expect(real.json.applied.map((a: { path: string }) => a.path).sort()).toEqual([
        'content/child.json',
        'content/new-parent.json',
      ])
    })

    test('a file renamed by hand fails in status, as the push would hold its delete', async () => {
      const w = await synced()
      const { rename } = await import('node:fs/promises')
      await rename(w.file('content/news.json'), w.file('content/latest.json'))
      const status = await w.cli('--json', 'status')
      expect(status.exitCode).toBe(1)
      const byPath = Object.fromEntries(status.json.changes.map((c: { path: string }) => [c.path, c]))
      expect(byPath['content/news.json']).toMatchObject({
        action: 'delete-remote',
        error: expect.stringMatching(/still says id "news"/),
      })
      expect(byPath['content/latest.json'].error).toMatch(/does not match the file name/)
    })

    test('a server item no file can hold makes status unclean and exit 1, as the pull fails', async () => {
      const w = await synced()
      // An id too long for any file name (a problem the server allows)
      const long = 'x'.repeat(300)
      await w.server.put('content', long, contentOf(long))
      const status = await w.cli('--json', 'status')
      expect(status.json.clean).toBe(false)
      expect(status.exitCode).toBe(1)
      expect(status.json.problems).toMatchObject([{ kind: 'content', id: long }])
      expect((await w.cli('pull')).exitCode).toBe(1)
    })

    test('a path argument that matches nothing is exit 2, in every command', async () => {
      const w = await synced()
      for (const command of ['push', 'pull', 'sync', 'status', 'diff']) {
        const run = await w.cli(command, 'content/hom.json')
        expect(run.exitCode, command).toBe(2)
        expect(run.stderr).toContain('"content/hom.json" did not match any file or server item')
      }
      // A folder, a file only on the server, and a file only here all match
      await w.server.remove('content', 'shop')
      await w.writeJson('content/only-here.json', contentFile('only-here'))
      expect((await w.cli('status', 'content')).exitCode).toBe(0)
      expect((await w.cli('status', 'content/shop.json')).exitCode).toBe(0)
      expect((await w.cli('status', 'content/only-here.json')).exitCode).toBe(0)
    })

    test('--json prints one document when the run stops: exit 2, 4 and 5', async () => {
      const w = await synced()
      const usage = await w.cli('--json', 'push', 'content/hom.json')
      expect(usage.exitCode).toBe(2)
      expect(usage.json).toEqual({
        error: { message: expect.stringContaining('did not match'), exitCode: 2 },
      })
      const badFlag = await w.cli('--json', 'push', '--no-such-flag')
      expect(badFlag.json).toEqual({
        error: { message: expect.stringContaining('--no-such-flag'), exitCode: 2 },
      })
      await writeFile(
        w.file('cms-sync.yaml'),
        (await import('node:fs/promises').then((fs) => fs.readFile(w.file('cms-sync.yaml'), 'utf8'))).replace(
          'environment: live',
          'environment: other',
        ),
      )
      const stop = await w.cli('--json', 'sync')
      expect(stop.exitCode).toBe(4)
      expect(stop.json).toEqual({ error: { message: expect.stringContaining('bound to'), exitCode: 4 } })
      await mkdir(w.file('.cms-sync'), { recursive: true })
    })

    test('a refused token names where it came from; without any it says not logged in', async () => {
      const w = await synced()
      await w.editJson('content/home.json', { properties: { title: 'local' } })
      // CMS_SYNC_TOKEN set to a token the server does not know
      w.extraEnv.CMS_SYNC_TOKEN = 'not-a-valid-token-at-all'
      const fromEnv = await w.cli('--json', 'push')
      expect(fromEnv.exitCode).toBe(2)
      expect(fromEnv.json.error.message).toContain('refused the token in CMS_SYNC_TOKEN')
      expect(fromEnv.stderr).toContain('refused the token in CMS_SYNC_TOKEN')
      expect(fromEnv.stderr).not.toContain('not-a-valid-token-at-all')
      // No token anywhere
      w.extraEnv.CMS_SYNC_TOKEN = ''
      const none = await w.cli('push')
      expect(none.exitCode).toBe(2)
      expect(none.stderr).toContain(`not logged in to ${w.proxy.url}`)
      // A stale token in the credentials file
      const credentials = path.join(w.root, '..', 'xdg', 'cms-sync', 'credentials.yaml')
      await mkdir(path.dirname(credentials), { recursive: true })
      await writeFile(credentials, `servers:\n  "${w.proxy.url}":\n    token: "expired-token-123"\n`)
      const fromFile = await w.cli('push')
      expect(fromFile.exitCode).toBe(2)
      expect(fromFile.stderr).toContain(`refused the token stored for it in ${credentials}`)
      expect(fromFile.stderr).toContain('cms-sync login')
    })
  },
)
