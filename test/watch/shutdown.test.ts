import { spawn } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { shutdown, shutdownOnStop } from '../../src/watch/shutdown.js'
import { createWorkQueue, type RunOutcome } from '../../src/watch/work-queue.js'
import { tempWorkspace, waitFor } from './helpers.js'

describe('shutdown', () => {
  test('on the stop signal: stop events, let the run finish, save, in that order', async () => {
    const steps: string[] = []
    let stop!: () => void
    const stopSignal = new Promise<void>((resolve) => {
      stop = resolve
    })
    let finishRun!: () => void
    const queue = createWorkQueue({
      run: async () => {
        steps.push('run started')
        await new Promise<void>((resolve) => {
          finishRun = resolve
        })
        steps.push('run finished')
        return { kind: 'done' }
      },
    })
    const done = shutdownOnStop(stopSignal, {
      stopTakingEvents: () => {
        steps.push('events stopped')
      },
      drain: (ms) => queue.drain(ms),
      saveState: async () => {
        steps.push('state saved')
      },
    })
    queue.add(['content/a.json'])
    await waitFor(() => steps.length === 1)
    stop()
    // Events stopped while the run goes on, and the state is not saved before it ends.
    await waitFor(() => steps.includes('events stopped'))
    expect(steps).toEqual(['run started', 'events stopped'])
    finishRun()
    expect(await done).toMatchObject({ finished: true, pending: 0 })
    expect(steps).toEqual(['run started', 'events stopped', 'run finished', 'state saved'])
  })

  test('a run past the deadline is abandoned, state is still saved, and it resolves in time', async () => {
    let saved = false
    const queue = createWorkQueue({ run: () => new Promise<RunOutcome>(() => {}) })
    queue.add(['content/a.json', 'content/b.json'])
    await waitFor(() => queue.running)
    const started = performance.now()
    const report = await shutdown(
      {
        stopTakingEvents: () => new Promise<void>(() => {}), // even a hanging close is bounded
        drain: (ms) => queue.drain(ms),
        saveState: async () => {
          saved = true
        },
      },
      300,
    )
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(report).toMatchObject({ finished: false, pending: 2 })
    expect(saved).toBe(true)
  })

  test('a failing save is reported, not thrown, so the daemon still exits 0', async () => {
    const report = await shutdown({
      stopTakingEvents: () => {},
      drain: async () => ({ finished: true, pending: new Set() }),
      saveState: async () => {
        throw new Error('disk full')
      },
    })
    expect(String(report.saveError)).toMatch(/disk full/)
  })

  test('a real daemon process exits 0 soon after SIGTERM, mid-run', async () => {
    const root = await tempWorkspace({ 'content/home.json': '{}\n' })
    const script = fileURLToPath(new URL('./fixtures/watch-daemon.ts', import.meta.url))
    const child = spawn(process.execPath, ['--import', 'tsx', script, root], {
      env: { ...process.env, RUN_MS: '30000', DEADLINE_MS: '1000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      await waitFor(() => stdout.includes('ready'), { timeoutMs: 8_000, what: `the daemon (${stderr})` })
      await writeFile(path.join(root, 'content/home.json'), '{"edited":true}\n')
      const runsLog = path.join(root, '.cms-sync/runs.log')
      await waitFor(async () => (await readFile(runsLog, 'utf8').catch(() => '')).includes('home.json'))

      const signalledAt = performance.now()
      child.kill('SIGTERM')
      const code = await exited
      expect(performance.now() - signalledAt).toBeLessThan(4_000)
      expect(code).toBe(0)
      expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toMatchObject({ finished: false, pending: 1 })
      expect(await readFile(path.join(root, '.cms-sync/saved.json'), 'utf8')).toContain('saved')
    } finally {
      child.kill('SIGKILL')
    }
  }, 10_000)
})
