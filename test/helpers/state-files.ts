// The state's files as a test handles them: taken whole and put back (a kill -9 before a save
// leaves the files of the save before; a backup restores them), and read as one record.

import { readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { loadState } from '../../src/state/state-file.js'
import type { World } from './sync-world.js'

const stateDir = (root: string) => path.join(root, '.cms-sync', 'state')

/** Every file of the state folder by name, as it is now. */
export async function copyState(root: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>()
  for (const name of (await readdir(stateDir(root))).sort())
    files.set(name, await readFile(path.join(stateDir(root), name)))
  return files
}

/** Puts a copy back in place of the state folder, as a kill -9 before a save leaves it. */
export async function putState(root: string, files: ReadonlyMap<string, Buffer>): Promise<void> {
  await rm(stateDir(root), { recursive: true, force: true })
  await mkdir(stateDir(root), { recursive: true })
  for (const [name, bytes] of files) await writeFile(path.join(stateDir(root), name), bytes)
}

/** The whole state as one JSON text: what a search of the state for a string looks at. */
export async function stateText(root: string): Promise<string> {
  return JSON.stringify(await loadState(root))
}

/** What a run records at its end, as it is now: the state's files and the lock. */
export async function copyRecord(w: World): Promise<{ state: Map<string, Buffer>; lock: string }> {
  return { state: await copyState(w.root), lock: await readFile(w.file('cms-sync.lock'), 'utf8') }
}

/**
 * content/home.json edited to `title` and pushed, then the state, the lock and the push journal
 * put back as a kill -9 right after the server's answer leaves them. Returns the record from
 * before the push and the journal as it stood while the write was in flight.
 */
export async function homePushedThenKilled(w: World, title: string) {
  const saved = await copyRecord(w)
  await w.editJson('content/home.json', { properties: { title } })
  let journal: string | undefined
  w.proxy.overrideWithBody = (method, route) => {
    if (method !== 'GET' && route.endsWith('/content/home'))
      journal = readFileSync(w.file('.cms-sync/pushes.jsonl'), 'utf8')
    return undefined
  }
  const push = await w.cli('push')
  w.proxy.overrideWithBody = undefined
  if (push.exitCode !== 0) throw new Error(`the push to kill after failed: ${push.stderr}`)
  await putState(w.root, saved.state)
  await writeFile(w.file('cms-sync.lock'), saved.lock)
  if (journal === undefined) throw new Error('the push wrote content/home.json with no journal open')
  await writeFile(w.file('.cms-sync/pushes.jsonl'), journal)
  return { ...saved, journal }
}
