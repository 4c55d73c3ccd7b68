// Real temp folders and a polling wait: watcher timings vary on a busy 2-core machine, so tests
// wait for a condition instead of sleeping a fixed time.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach } from 'vitest'
import {
  type LocalBatchInfo,
  type WatchWorkspaceOptions,
  watchWorkspace,
} from '../../src/watch/local-changes.js'
import { loadIgnoreRules } from '../../src/workspace/ignore-rules.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A temp folder with the given files, removed after the test. */
export async function tempWorkspace(files: Record<string, string> = {}): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'cms-sync-watch-'))
  cleanups.push(() => rm(root, { recursive: true, force: true }))
  await writeFiles(root, files)
  return root
}

export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true })
    await writeFile(path.join(root, rel), text)
  }
}

export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  {
    timeoutMs = 5_000,
    intervalMs = 20,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string | (() => string) } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) {
      const named = typeof what === 'function' ? what() : what // read at the failure: what arrived by then
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${named}`)
    }
    await sleep(intervalMs)
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

export interface RecordedBatch {
  paths: Set<string>
  info: LocalBatchInfo
}

/** Names the marker files `settle()` writes; left out of what the recorder reports. */
const MARKER = /^content\/zz-settled-\d+\.json$/

/**
 * Watches `root` with its real ignore rules and records every batch; closed after the test.
 * Marker files written by `settle()` are left out of the batches (a batch of only markers is not
 * recorded at all).
 */
export async function recordBatches(root: string, overrides: Partial<WatchWorkspaceOptions> = {}) {
  const batches: RecordedBatch[] = []
  const errors: unknown[] = []
  const markersSeen = new Set<string>()
  let markers = 0
  const watcher = watchWorkspace(root, {
    debounceMs: 100,
    ignoreRules: await loadIgnoreRules(root),
    onBatch: (paths, info) => {
      const own = new Set<string>()
      for (const p of paths) if (MARKER.test(p)) own.add(p)
      for (const p of own) markersSeen.add(p)
      if (own.size === 0) batches.push({ paths, info })
      else if (own.size < paths.size)
        batches.push({ paths: new Set([...paths].filter((p) => !own.has(p))), info })
    },
    onError: (error) => errors.push(error),
    ...overrides,
  })
  cleanups.push(() => watcher.close())
  await watcher.ready
  return {
    watcher,
    batches,
    errors,
    /**
     * Writes a marker file into content/ and waits until the watcher delivers it. The OS reports
     * events in order and the watcher hands over all it holds with any batch, so once the marker
     * is delivered, every event from before it has been delivered too: what has not arrived by
     * then never will. Call it once the batch under test has been delivered.
     */
    async settle(): Promise<void> {
      const marker = `content/zz-settled-${markers++}.json`
      await writeFiles(root, { [marker]: '{}' })
      await waitFor(() => markersSeen.has(marker), { what: `the marker ${marker}` })
    },
    /** Every path delivered so far, across batches. */
    seen: () => new Set(batches.flatMap((b) => [...b.paths])),
    /** Paths whose last delivered state was a deletion. */
    deleted: () => {
      const out = new Set<string>()
      for (const b of batches) for (const p of b.paths) b.info.deleted.has(p) ? out.add(p) : out.delete(p)
      return out
    },
  }
}
