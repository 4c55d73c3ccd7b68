// The state's files as a test handles them: taken whole and put back (a kill -9 before a save
// leaves the files of the save before; a backup restores them), and read as one record.

import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { loadState } from '../../src/state/state-file.js'

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
