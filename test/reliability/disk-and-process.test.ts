// Attacks on the workspace's disk and process (docs/reliability.md "Attacks on the workspace:
// data, disk and process"): a holder of the lock stopped with SIGSTOP, temp files a kill -9 left,
// kill -9 of watch right after it pushed, a media file saved while it uploads, a full disk. The
// CLI runs as its own process (dist/) against the in-process emulator where it must be a process
// (signals, the lock); a sentinel tree beside the workspace is checksummed before and after.

import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { createMediaApi } from '../../src/remote/media.js'
import { loadState } from '../../src/state/state-file.js'
import { hashText } from '../../src/workspace/codec.js'
import { contentOf, startWorld, type World, writeConfig } from '../helpers/sync-world.js'
import { setWatchConfig, watchProcess } from '../helpers/watch.js'
import { runCli } from './processes.js'
import { report, sentinelAround } from './support.js'

const _sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex')

const sentinel = (w: World) => sentinelAround(w.root)

/** Edits a content file's title, as a person in an editor would. */
async function setTitle(w: World, id: string, title: string): Promise<void> {
  const file = await w.readJson(`content/${id}.json`)
  await w.writeJson(`content/${id}.json`, { ...file, properties: { ...(file.properties as object), title } })
}

async function serverTitle(w: World, id: string): Promise<unknown> {
  return ((await w.server.get('content', id))?.properties as { title?: unknown } | undefined)?.title
}

/**
 * A tmpfs of `size` mounted at `dir`, or undefined where this process may not mount one (not
 * root, or no mount permission in the container).
 */
async function smallDisk(dir: string, size: string): Promise<{ dir: string } | undefined> {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return undefined
  await mkdir(dir, { recursive: true })
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' })
    return { dir }
  } catch {
    return undefined
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

describe.each(['spec', 'upstream'] as const)(
  'attacks on the workspace disk and process (%s dialect)',
  (dialect) => {
    let world: World | undefined
    const children: Array<{ kill(signal: NodeJS.Signals): boolean; exitCode: number | null }> = []
    const unmount: Array<{ dir: string }> = []
    afterEach(async () => {
      for (const disk of unmount.splice(0)) {
        execFileSync('umount', ['-l', disk.dir])
        await rm(disk.dir, { recursive: true, force: true })
      }
      for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
      await world?.close()
      world = undefined
    })
    const keep = (w: World): World => {
      world = w
      return w
    }

    test('item 11: a file saved while it uploads (media, JSON) is seen as changed and its new bytes pushed next', async () => {
      const w = keep(await startWorld(dialect, { resources: ['schemas', 'content', 'media'] }))
      const outside = await sentinel(w)
      await mkdir(w.file('media/docs'), { recursive: true })
      await writeFile(w.file('media/docs/report.txt'), 'report v1\n')
      expect((await w.cli('sync')).exitCode).toBe(0)
      const before = await outside()
      // The editor saves v2 (same size: only the stat's mtime tells) the moment v1's bytes have
      // reached the server, before it answers: the proxy holds the request body whole first.
      await writeFile(w.file('media/docs/report.txt'), 'report v2\n')
      await setTitle(w, 'home', 'home v2')
      let saved = 0
      let mediaSaved = false
      w.proxy.overrideWithBody = (method, route, body) => {
        if (method === 'POST' && /\/media\/[^/]+$/.test(route) && !route.endsWith('/new') && !mediaSaved) {
          mediaSaved = true
          saved++
          writeFileSync(w.file('media/docs/report.txt'), 'report v3\n')
        }
        if (method !== 'GET' && route.includes('/content/home') && body.includes('home v2')) {
          saved++
          const file = JSON.parse(readFileSync(w.file('content/home.json'), 'utf8'))
          writeFileSync(
            w.file('content/home.json'),
            `${JSON.stringify({ ...file, properties: { ...file.properties, title: 'home v3' } }, null, 2)}\n`,
          )
        }
        return undefined
      }
      const push = await runCli(['-C', w.root, 'push'], w.env).done
      w.proxy.overrideWithBody = undefined
      expect(push.code, push.stderr).toBe(0)
      expect(saved, w.proxy.seen.join('\n')).toBe(2)
      // Whatever reached the server, the files now hold v3, and every command says so.
      const status = await runCli(['-C', w.root, '--json', 'status'], w.env).done
      const changes = JSON.parse(status.stdout).changes.map((c: { path: string; action: string }) => [
        c.path,
        c.action,
      ])
      expect(changes).toEqual(
        expect.arrayContaining([
          ['content/home.json', 'push'],
          ['media/docs/report.txt', 'push'],
        ]),
      )
      const again = await runCli(['-C', w.root, 'push'], w.env).done
      expect(again.code, again.stderr).toBe(0)
      expect(await serverTitle(w, 'home')).toBe('home v3')
      const [media] = await createMediaApi(w.server).list()
      const bytes = await (await fetch(`${w.emulator.url}/media/demo/live/${media!.id}`)).text()
      expect(bytes).toBe('report v3\n')
      const clean = await runCli(['-C', w.root, '--json', 'status'], w.env).done
      expect(JSON.parse(clean.stdout).changes).toEqual([])
      expect(await outside()).toEqual(before)
      report(`attacks/saved-during-upload/${dialect}`, { filesSavedDuringUpload: saved, pushedAfter: 2 })
    })

    test("item 11: a media file saved while a pull downloads the server's version is kept, not overwritten", async () => {
      const w = keep(await startWorld(dialect, { resources: ['schemas', 'content', 'media'] }))
      const outside = await sentinel(w)
      await mkdir(w.file('media/docs'), { recursive: true })
      await writeFile(w.file('media/docs/report.txt'), 'report v1\n')
      expect((await w.cli('sync')).exitCode).toBe(0)
      const before = await outside()
      const api = createMediaApi(w.server)
      const [item] = await api.list()
      const upload = path.join(await mkdtemp(path.join(tmpdir(), 'cms-sync-upload-')), 'upload.txt')
      await writeFile(upload, 'server v2\n')
      await api.upload({ path: upload, size: 10, name: 'report.txt' }, item!.id)
      let saved = false
      w.proxy.override = (method, route) => {
        if (method === 'GET' && route === `/media/demo/live/${item!.id}` && !saved) {
          saved = true
          writeFileSync(w.file('media/docs/report.txt'), 'local edit during the download\n')
        }
        return undefined
      }
      // Upstream lists no dates: only --checksum sees a byte change under the same name.
      const checksum = dialect === 'upstream' ? ['--checksum'] : []
      const pull = await runCli(['-C', w.root, '--json', 'pull', ...checksum], w.env).done
      w.proxy.override = undefined
      expect(saved, w.proxy.seen.join('\n')).toBe(true)
      expect(readFileSync(w.file('media/docs/report.txt'), 'utf8')).toBe('local edit during the download\n')
      expect(pull.code, pull.stderr).toBe(3)
      const status = JSON.parse((await runCli(['-C', w.root, '--json', 'status'], w.env).done).stdout)
      expect(status.clean).toBe(false)
      expect(await outside()).toEqual(before)
    })

    test('item 14: a full disk during pull stops the run with "disk full", exit 1, nothing torn, the lock released; the next run completes', async (ctx) => {
      const w = keep(await startWorld(dialect, { content: [] }))
      const disk = await smallDisk(await mkdtemp(path.join(tmpdir(), 'cms-sync-disk-')), '1m')
      if (!disk) {
        ctx.skip(
          `item 14 needs a small tmpfs: mounting one takes root (this runs as uid ${process.getuid?.()})`,
        )
        return
      }
      unmount.push(disk)
      const root = path.join(disk.dir, 'site')
      await mkdir(root)
      await writeConfig(root, w.proxy.url, dialect, ['schemas', 'content'])
      const outside = await sentinel(w)
      const before = await outside()
      // 24 pages of 100 KB: more than the 1 MB disk holds.
      const big = 'x'.repeat(100 * 1024)
      for (let i = 0; i < 24; i++)
        await w.server.put(
          'content',
          `page-${i}`,
          contentOf(`page-${i}`, { properties: { title: `${i}${big}` } }),
        )
      const started = Date.now()
      const pull = runCli(['-C', root, 'pull'], w.env)
      children.push(pull.child)
      const timer = setTimeout(() => pull.child.kill('SIGKILL'), 60_000)
      const full = await pull.done
      clearTimeout(timer)
      const seconds = (Date.now() - started) / 1000
      expect(full.signal, `hung: ${full.stderr.slice(-2000)}`).toBeNull()
      expect(full.code, full.stderr).toBe(1)
      expect(full.stderr).toMatch(/disk full at /)
      expect(full.stderr).not.toMatch(/could not reach the server/)
      expect(existsSync(path.join(root, '.cms-sync', 'lock.pid'))).toBe(false)
      // Every file there is whole, and the state vouches for none the disk does not hold.
      const pulled = (await readdir(path.join(root, 'content')).catch(() => [] as string[])).filter((n) =>
        n.endsWith('.json'),
      )
      for (const name of pulled) JSON.parse(await readFile(path.join(root, 'content', name), 'utf8'))
      const state = await loadState(root)
      for (const item of Object.values(state?.items ?? {})) {
        const text = await readFile(path.join(root, item.path), 'utf8')
        expect(hashText(text), item.path).toBe(item.baseHash)
      }
      // Space freed: the next run completes.
      execFileSync('mount', ['-o', 'remount,size=16m', disk.dir])
      const next = await runCli(['-C', root, 'pull'], w.env).done
      expect(next.code, next.stderr).toBe(0)
      expect((await readdir(path.join(root, 'content'))).filter((n) => n.endsWith('.json'))).toHaveLength(24)
      const status = await runCli(['-C', root, '--json', 'status'], w.env).done
      expect(JSON.parse(status.stdout).clean).toBe(true)
      expect(await outside()).toEqual(before)
      report(`attacks/full-disk/${dialect}`, {
        diskMB: 1,
        pulledBeforeFull: pulled.length,
        firstExit: full.code,
        said: full.stderr.trim().split('\n').at(-1),
        secondsToStop: seconds,
        nextExit: next.code,
      })
    })

    test('item 10: a kill -9 of watch right after its push, then another edit: the restart pushes it, no false conflict', async () => {
      const w = keep(await startWorld(dialect))
      const outside = await sentinel(w)
      await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 60 })
      expect((await w.cli('sync')).exitCode).toBe(0)
      const before = await outside()
      let falseConflicts = 0
      const rounds = 3
      for (let round = 1; round <= rounds; round++) {
        const watch = watchProcess(w.root, w.env)
        children.push(watch.child)
        await watch.waitForEvent({ event: 'reconciled' }, 20_000)
        await setTitle(w, 'home', `home ${round} pushed by watch`)
        await until(
          'watch to push',
          async () => (await serverTitle(w, 'home')) === `home ${round} pushed by watch`,
        )
        // Killed within the state's save delay: the push is on the server, its base is not on disk.
        watch.child.kill('SIGKILL')
        await watch.exited
        // The same person edits the same field again before anything runs.
        await setTitle(w, 'home', `home ${round} edited after the kill`)
        const sync = await runCli(['-C', w.root, '--json', 'sync'], w.env).done
        const conflicts = JSON.parse(sync.stdout).conflicts ?? []
        falseConflicts += conflicts.length
        expect(conflicts, sync.stderr).toEqual([])
        expect(sync.code, sync.stderr).toBe(0)
        expect(await serverTitle(w, 'home')).toBe(`home ${round} edited after the kill`)
      }
      expect(existsSync(w.file('.cms-sync/conflicts'))).toBe(false)
      // The journal of pushes is empty once a saved state holds them all.
      expect(existsSync(w.file('.cms-sync/pushes.jsonl'))).toBe(false)
      expect(await outside()).toEqual(before)
      report(`attacks/kill-watch-after-push/${dialect}`, { rounds, falseConflicts })
    })

    test('item 10: the same for a media file: a kill -9 of watch right after its upload, another edit, no false conflict', async () => {
      const w = keep(await startWorld(dialect, { resources: ['schemas', 'content', 'media'] }))
      const outside = await sentinel(w)
      await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 60 })
      await mkdir(w.file('media/docs'), { recursive: true })
      await writeFile(w.file('media/docs/report.txt'), 'report v1\n')
      expect((await w.cli('sync')).exitCode).toBe(0)
      const before = await outside()
      const api = createMediaApi(w.server)
      const [item] = await api.list()
      const serverBytes = async () => (await api.hash(item!.id))?.sha256
      const sha = (text: string) => createHash('sha256').update(text).digest('hex')
      const watch = watchProcess(w.root, w.env)
      children.push(watch.child)
      await watch.waitForEvent({ event: 'reconciled' }, 20_000)
      await writeFile(w.file('media/docs/report.txt'), 'report v2, uploaded by watch\n')
      await until(
        'watch to upload',
        async () => (await serverBytes()) === sha('report v2, uploaded by watch\n'),
      )
      watch.child.kill('SIGKILL')
      await watch.exited
      await writeFile(w.file('media/docs/report.txt'), 'report v3, edited after the kill\n')
      const sync = await runCli(['-C', w.root, '--json', 'sync'], w.env).done
      expect(JSON.parse(sync.stdout).conflicts ?? [], sync.stderr).toEqual([])
      expect(sync.code, sync.stderr).toBe(0)
      expect(await serverBytes()).toBe(sha('report v3, edited after the kill\n'))
      expect((await api.list()).map((m) => m.id)).toEqual([item!.id])
      expect(await outside()).toEqual(before)
      report(`attacks/kill-watch-after-upload/${dialect}`, { falseConflicts: 0 })
    })

    test('item 10: temp files a kill -9 leaves are ours by name, out of the synced folders, and gone at the next start', async () => {
      const w = keep(await startWorld(dialect, { content: [] }))
      const outside = await sentinel(w)
      const big = 'x'.repeat(64 * 1024)
      for (let i = 0; i < 40; i++)
        await w.server.put(
          'content',
          `page-${i}`,
          contentOf(`page-${i}`, { properties: { title: `${i}${big}` } }),
        )
      const before = await outside()
      const strays: string[] = []
      const kills = 6
      for (let k = 0; k < kills; k++) {
        const pull = runCli(['-C', w.root, 'pull'], w.env)
        children.push(pull.child)
        const at = w.proxy.seen.length
        // Killed while it writes: after the listings, a little later each time.
        await until('the pull to list', () => w.proxy.seen.length >= at + 2 || pull.child.exitCode !== null)
        await sleep(20 * k)
        pull.child.kill('SIGKILL')
        await pull.done
        for (const folder of ['content', 'schemas']) {
          const names = await readdir(w.file(folder)).catch(() => [] as string[])
          strays.push(...names.filter((n) => !n.endsWith('.json')).map((n) => `${folder}/${n}`))
        }
        // Not a change for status (nor for git: nothing but *.json in the synced folders).
        const status = await runCli(['-C', w.root, '--json', 'status'], w.env).done
        expect(status.code, status.stderr).not.toBe(1)
      }
      expect(strays).toEqual([])
      // What a run of an older version, or one killed anywhere, leaves: found and removed at the
      // next start, never pushed or reported.
      await mkdir(w.file('.cms-sync/tmp'), { recursive: true })
      await mkdir(w.file('content'), { recursive: true })
      await writeFile(w.file('content/page-0.json.1234567890'), '{"torn":')
      await writeFile(w.file('.cms-sync/tmp/write-999999999-1'), '{"torn":')
      const final = await runCli(['-C', w.root, 'pull'], w.env).done
      expect(final.code, final.stderr).toBe(0)
      expect(existsSync(w.file('content/page-0.json.1234567890'))).toBe(false)
      expect(await readdir(w.file('.cms-sync/tmp')).catch(() => [])).toEqual([])
      expect((await readdir(w.file('content'))).sort()).toEqual(
        Array.from({ length: 40 }, (_, i) => `page-${i}.json`).sort(),
      )
      expect(await outside()).toEqual(before)
      report(`attacks/kill-pull-temp-files/${dialect}`, { kills, straysInSyncedFolders: strays.length })
    })

    test('item 15: a lock holder stopped with SIGSTOP for 12 s keeps its lock; the second process exits 5', async () => {
      const w = keep(await startWorld(dialect))
      const outside = await sentinel(w)
      await setWatchConfig(w.root, { debounceMs: 50, pollSeconds: 60 })
      expect((await w.cli('sync')).exitCode).toBe(0)
      const before = await outside()
      const watch = watchProcess(w.root, w.env)
      children.push(watch.child)
      await watch.waitForEvent({ event: 'reconciled' }, 20_000)
      watch.child.kill('SIGSTOP')
      // Stopped for 12 s, as the second process sees it: the lock's heartbeat (its folder's mtime,
      // which a stopped holder cannot refresh) 12 s old. Put back before the holder runs again,
      // as a real stop leaves it, or the holder would take its lock for compromised.
      const lock = w.file('.cms-sync/lock')
      const heartbeat = (await stat(lock)).mtime
      const stoppedAt = new Date(Date.now() - 12_500)
      await utimes(lock, stoppedAt, stoppedAt)
      const second = await runCli(['-C', w.root, 'sync'], w.env).done
      await utimes(lock, heartbeat, heartbeat)
      watch.child.kill('SIGCONT')
      expect(second.code, second.stderr).toBe(5)
      expect(second.stderr).toMatch(new RegExp(`locked by \`cms-sync watch\` \\(pid ${watch.child.pid}`))
      expect(JSON.parse(await readFile(w.file('.cms-sync/lock.pid'), 'utf8')).pid).toBe(watch.child.pid)
      // The holder goes on (it pushes the next edit) and still owns the workspace, and stops
      // cleanly: exit 0, lock released.
      await setTitle(w, 'home', 'home after the stop')
      await watch.waitForEvent({ event: 'pushed', path: 'content/home.json' }, 20_000)
      expect(await serverTitle(w, 'home')).toBe('home after the stop')
      expect(JSON.parse(await readFile(w.file('.cms-sync/lock.pid'), 'utf8')).pid).toBe(watch.child.pid)
      watch.child.kill('SIGTERM')
      expect((await watch.exited).code).toBe(0)
      expect(existsSync(w.file('.cms-sync/lock'))).toBe(false)
      expect(await outside()).toEqual(before)
      report(`attacks/sigstop-lock/${dialect}`, {
        stoppedSeconds: 12.5,
        secondExit: second.code,
        lockKept: true,
      })
    })
  },
)
