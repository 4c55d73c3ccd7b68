// Shared by the reliability tests: the size of a run (RELIABILITY_SCALE), a seeded random
// source, the figures report, and the oracles that compare server, files and state.

import { createHash } from 'node:crypto'
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileBytes, type JsonObject } from '../../src/workspace/codec.js'
import { contentCodec } from '../../src/workspace/content-codec.js'

export const FULL = process.env.RELIABILITY_SCALE === 'full'
export const SEED = Number(process.env.RELIABILITY_SEED ?? 20261122)

/** A CI-sized or full-sized figure. */
export function scaled(ci: number, full: number): number {
  return FULL ? full : ci
}

/** mulberry32: the same run for the same seed, so a failure can be replayed. */
export function seeded(seed: number): {
  next(): number
  int(n: number): number
  pick<T>(xs: readonly T[]): T
} {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return { next, int: (n) => Math.floor(next() * n), pick: (xs) => xs[Math.floor(next() * xs.length)]! }
}

export const REPORT_DIR = process.env.RELIABILITY_REPORT_DIR ?? path.join(tmpdir(), 'cms-sync-reliability')
export const REPORT_FILE = path.join(REPORT_DIR, 'reliability-report.jsonl')

/** One summary line on stdout and one JSON line in the report file, per test. */
export function report(test: string, figures: Record<string, unknown>): void {
  mkdirSync(REPORT_DIR, { recursive: true })
  const line = { test, scale: FULL ? 'full' : 'ci', seed: SEED, at: new Date().toISOString(), ...figures }
  appendFileSync(REPORT_FILE, `${JSON.stringify(line)}\n`)
  console.log(`[reliability] ${test}: ${JSON.stringify(figures)} (report: ${REPORT_FILE})`)
}

export function readReport(): unknown[] {
  try {
    return readFileSync(REPORT_FILE, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  } catch {
    return []
  }
}

/** The hash cms-sync would record as the base of a content the server holds. */
export function contentHash(remote: JsonObject): string {
  return fileBytes(contentCodec.toFile(remote)).hash
}

/**
 * Every file under dir (relative, '/'-separated), with a hash of its bytes (cheap to compare).
 * A workspace's `.cms-sync/logs/` is left out: the log records every run, a safety stop
 * included, so "nothing changed" means nothing of the data, state or files.
 */
export async function filesUnder(
  dir: string,
  skip: (rel: string) => boolean = () => false,
): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  const skipped = (rel: string) => rel === '.cms-sync/logs' || rel.startsWith('.cms-sync/logs/') || skip(rel)
  for (const [rel, bytes] of await bytesUnder(dir, skipped))
    out.set(rel, createHash('sha256').update(bytes).digest('hex'))
  return out
}

/** Every file under dir with its bytes; symlinks are listed, never followed. */
export async function bytesUnder(
  dir: string,
  skip: (rel: string) => boolean = () => false,
): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>()
  const walk = async (d: string): Promise<void> => {
    let entries: import('node:fs').Dirent[]
    try {
      entries = await readdir(d, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      const full = path.join(d, entry.name)
      const rel = path.relative(dir, full).split(path.sep).join('/')
      if (skip(rel)) continue
      if (entry.isDirectory()) await walk(full)
      else if (entry.isFile()) out.set(rel, await readFile(full))
      else out.set(rel, Buffer.from(`<${entry.isSymbolicLink() ? 'symlink' : 'other'}>`))
    }
  }
  await walk(dir)
  return out
}

/** The places under `dir` where any of the secrets appears (as text). */
export async function secretsIn(dir: string, secrets: string[]): Promise<string[]> {
  const found: string[] = []
  for (const [rel, bytes] of await bytesUnder(dir)) {
    const text = bytes.toString('latin1')
    for (const s of secrets) if (s && text.includes(s)) found.push(`${rel} holds ${s.slice(0, 4)}…`)
  }
  return found
}

/**
 * The folder the workspace lives in, given files of its own that no run may touch; returns a
 * snapshot of every file there but the workspace's, to compare before and after an attack.
 */
export async function sentinelAround(root: string): Promise<() => Promise<Map<string, string>>> {
  const around = path.dirname(root)
  await mkdir(path.join(around, 'sentinel', 'deep'), { recursive: true })
  await writeFile(path.join(around, 'sentinel', 'notes.txt'), 'not part of any workspace\n')
  await writeFile(path.join(around, 'sentinel', 'deep', 'home.json'), '{"id":"home"}\n')
  await writeFile(path.join(around, 'site.json'), '{"beside":"the workspace"}\n')
  const site = path.basename(root)
  return () => filesUnder(around, (rel) => rel === site || rel.startsWith(`${site}/`))
}
