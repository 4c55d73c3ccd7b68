import { cp, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { createWorkQueue, type RunContext, type RunOutcome } from '../../src/watch/work-queue.js'
import { sleep, tempWorkspace, waitFor, writeFiles } from './helpers.js'

/** A stand-in for the engine: copies dirty files into a "server" folder, unless the server is down. */
async function fileServer(workspace: string) {
  const serverDir = await tempWorkspace()
  const calls: Array<{ paths: string[]; full: boolean }> = []
  const state = { up: true, delayMs: 0 }
  const run = async (paths: Set<string>, context: RunContext): Promise<RunOutcome> => {
    calls.push({ paths: [...paths].sort(), full: context.full })
    await sleep(state.delayMs) // a slow server, where the test says so: a run still in flight
    if (!state.up) return { kind: 'offline', cause: new Error('ECONNREFUSED') }
    for (const p of paths) {
      const target = path.join(serverDir, p)
      await rm(target, { force: true })
      await cp(path.join(workspace, p), target).catch(() => {}) // deleted locally: gone on the server
    }
    return { kind: 'done' }
  }
  const onServer = (p: string) => readFile(path.join(serverDir, p), 'utf8').catch(() => undefined)
  return { run, calls, state, onServer }
}

describe('work queue', () => {
  test('paths added while a run is going wait for the next run; one run at a time', async () => {
    const ws = await tempWorkspace({ 'content/a.json': 'a', 'content/b.json': 'b', 'content/c.json': 'c' })
    const server = await fileServer(ws)
    server.state.delayMs = 150
    let running = 0
    let maxRunning = 0
    const queue = createWorkQueue({
      run: async (paths, ctx) => {
        maxRunning = Math.max(maxRunning, ++running)
        try {
          return await server.run(paths, ctx)
        } finally {
          running -= 1
        }
      },
    })
    queue.add(['content/a.json'])
    await waitFor(() => server.calls.length === 1)
    queue.add(['content/b.json'])
    queue.add(['content/c.json', 'content/b.json'])
    await waitFor(() => server.calls.length === 2 && !queue.running)
    expect(server.calls.map((c) => c.paths)).toEqual([
      ['content/a.json'],
      ['content/b.json', 'content/c.json'],
    ])
    expect(maxRunning).toBe(1)
    expect(await server.onServer('content/c.json')).toBe('c')
  })

  test('nothing is lost while the server is away: the paths are retried until it is back', async () => {
    const ws = await tempWorkspace({ 'content/a.json': 'a1', 'content/b.json': 'b1' })
    const server = await fileServer(ws)
    server.state.up = false
    const outcomes: string[] = []
    const queue = createWorkQueue({
      run: server.run,
      retryDelayMs: 30,
      onOutcome: (outcome) => outcomes.push(outcome.kind),
    })
    queue.add(['content/a.json'])
    await waitFor(() => queue.failures >= 2, { what: 'two failed runs' })
    expect(queue.pending).toEqual(new Set(['content/a.json']))
    await writeFiles(ws, { 'content/b.json': 'b2' }) // edited while offline
    queue.add(['content/b.json'])
    server.state.up = true
    await waitFor(() => queue.pending.size === 0 && !queue.running, { what: 'the queue to empty' })
    expect(await server.onServer('content/a.json')).toBe('a1')
    expect(await server.onServer('content/b.json')).toBe('b2')
    expect(outcomes.at(-1)).toBe('done')
    expect(queue.failures).toBe(0)
  })

  test('retry delays grow and are capped', async () => {
    const startedAt: number[] = []
    const queue = createWorkQueue({
      retryDelayMs: 20,
      maxRetryDelayMs: 80,
      run: async () => {
        startedAt.push(performance.now())
        return { kind: 'offline' }
      },
    })
    queue.add(['x'])
    await waitFor(() => startedAt.length >= 5)
    await queue.drain(100)
    const gaps = startedAt.slice(1).map((t, i) => t - startedAt[i]!)
    expect(gaps[0]).toBeGreaterThanOrEqual(18) // 20, 40, 80, 80 (timers may run late, never early)
    expect(gaps[1]).toBeGreaterThanOrEqual(38)
    expect(gaps[2]).toBeGreaterThanOrEqual(78)
    expect(gaps[3]).toBeLessThan(78 + 300)
  })

  test('items the run could not finish (retryPaths) stay queued; a throwing run keeps all its paths', async () => {
    const calls: string[][] = []
    let mode: 'partial' | 'throw' | 'ok' = 'partial'
    const queue = createWorkQueue({
      retryDelayMs: 20,
      run: async (paths) => {
        calls.push([...paths].sort())
        if (mode === 'partial') {
          mode = 'throw'
          return { kind: 'done', retryPaths: ['b'] }
        }
        if (mode === 'throw') {
          mode = 'ok'
          throw new Error('engine bug')
        }
        return { kind: 'done' }
      },
    })
    queue.add(['a', 'b'])
    await waitFor(() => calls.length === 3 && !queue.running)
    expect(calls).toEqual([['a', 'b'], ['b'], ['b']])
    expect(queue.pending.size).toBe(0)
  })

  test('requestFull resolves with the outcome of the run that carried it; a failed full run is owed', async () => {
    const ws = await tempWorkspace({ 'content/a.json': 'a' })
    const server = await fileServer(ws)
    server.state.up = false
    const queue = createWorkQueue({ run: server.run, retryDelayMs: 10_000 })
    queue.add(['content/a.json'])
    expect(await queue.requestFull()).toMatchObject({ kind: 'offline' })
    server.state.up = true
    // The remote poller asks again: it does not wait out the 10 s retry delay.
    expect(await queue.requestFull()).toEqual({ kind: 'done' })
    expect(server.calls.at(-1)).toEqual({ paths: ['content/a.json'], full: true })
  })

  test('drain waits for the run in flight, starts no other, and returns what is left', async () => {
    const ws = await tempWorkspace({ 'content/a.json': 'a', 'content/b.json': 'b' })
    const server = await fileServer(ws)
    server.state.delayMs = 200
    const queue = createWorkQueue({ run: server.run })
    queue.add(['content/a.json'])
    await waitFor(() => queue.running && server.calls.length === 1)
    queue.add(['content/b.json'])
    const result = await queue.drain(2_000)
    expect(result).toEqual({ finished: true, pending: new Set(['content/b.json']) })
    expect(await server.onServer('content/a.json')).toBe('a')
    // The run's end let the queue look for more (it starts the next run at once, on the next tick
    // after it): drained, it starts none.
    expect(queue.running).toBe(false)
    await new Promise((resolve) => setImmediate(resolve))
    expect(queue.running).toBe(false)
    expect(server.calls).toHaveLength(1)
  })

  test('drain aborts a run that outlives the deadline; its paths are reported as pending', async () => {
    let sawAbort = false
    let started = false
    const queue = createWorkQueue({
      run: (_paths, { signal }) =>
        new Promise<RunOutcome>((resolve) => {
          started = true
          signal.addEventListener('abort', () => {
            sawAbort = true
            resolve({ kind: 'offline', cause: signal.reason })
          })
        }),
    })
    queue.add(['content/slow.json'])
    await waitFor(() => started)
    const drainStarted = performance.now()
    const result = await queue.drain(150)
    expect(performance.now() - drainStarted).toBeLessThan(1_500)
    expect(sawAbort).toBe(true)
    expect(result).toEqual({ finished: false, pending: new Set(['content/slow.json']) })
  })

  test('drain returns even when the run ignores the abort', async () => {
    let started = false
    const queue = createWorkQueue({
      run: () => {
        started = true
        return new Promise<RunOutcome>(() => {}) // hangs forever
      },
    })
    queue.add(['content/stuck.json'])
    await waitFor(() => started)
    const drainStarted = performance.now()
    const result = await queue.drain(100)
    expect(performance.now() - drainStarted).toBeLessThan(1_500) // deadline plus a short grace
    expect(result).toEqual({ finished: false, pending: new Set(['content/stuck.json']) })
  })
})
