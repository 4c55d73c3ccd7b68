// Our own writes must not echo back as local edits ("Skipping path we modified", syncthing). The
// executor announces each write or delete here before it touches the disk; when a batch arrives,
// a path is dropped only if what is on disk NOW is exactly what we wrote (or still absent after our
// delete). So a user's edit that lands right after ours, in the same batch or a later one, is
// still seen: its bytes hash differently. Matching by content, not by event, also copes with
// a watcher sending one, two or three events for one write.

import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import path from 'node:path'

/** Long enough for the event to cross the debounce on a busy machine, short enough to not linger. */
export const OWN_WRITE_TTL_MS = 5_000

export type ExpectedContent = string | 'deleted'

/** The hash `expect()` takes: sha256 of the exact bytes written, hex. */
export function hashOfBytes(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex')
}

export interface OwnWrites {
  /** Call before writing `relPath` (hash of the bytes about to be written) or before deleting it. */
  expect(relPath: string, content: ExpectedContent): void
  /** The paths of a batch that are not explained by our own writes (reads only announced paths). */
  filterBatch(paths: Iterable<string>): Promise<Set<string>>
  /** Announced paths not yet expired (diagnostics, tests). */
  readonly size: number
}

interface Expectation {
  content: ExpectedContent
  expiresAt: number
}

export function createOwnWrites(
  root: string,
  options: { ttlMs?: number; now?: () => number } = {},
): OwnWrites {
  const ttlMs = options.ttlMs ?? OWN_WRITE_TTL_MS
  const now = options.now ?? Date.now
  const expected = new Map<string, Expectation>()

  function prune(at: number): void {
    for (const [relPath, entry] of expected) if (entry.expiresAt <= at) expected.delete(relPath)
  }

  async function isOurs(relPath: string, entry: Expectation): Promise<boolean> {
    let onDisk: string | undefined
    try {
      onDisk = await hashOnDisk(path.join(root, relPath))
    } catch {
      return false // unreadable now (a folder, no permission): let the engine look at it
    }
    return entry.content === 'deleted' ? onDisk === undefined : onDisk === entry.content
  }

  return {
    expect(relPath, content) {
      // The latest announcement wins: two writes in a row leave the second one's bytes on disk.
      expected.set(normalize(relPath), { content, expiresAt: now() + ttlMs })
    },
    async filterBatch(paths) {
      prune(now())
      const kept = new Set<string>()
      await Promise.all(
        [...paths].map(async (relPath) => {
          const entry = expected.get(normalize(relPath))
          // Entries stay until they expire: a second event for the same write must be dropped too.
          if (entry === undefined || !(await isOurs(relPath, entry))) kept.add(relPath)
        }),
      )
      return kept
    },
    get size() {
      prune(now())
      return expected.size
    },
  }
}

async function hashOnDisk(absolutePath: string): Promise<string | undefined> {
  try {
    return hashOfBytes(await readFile(absolutePath))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw error
  }
}

function normalize(relPath: string): string {
  return relPath.replaceAll('\\', '/').replace(/^\.\//, '')
}
