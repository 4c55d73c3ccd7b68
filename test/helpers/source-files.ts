import { readdir } from 'node:fs/promises'
import path from 'node:path'

/** Every .ts file under `dir`, recursively (the source checks of test/layers and test/cli/lazy-imports). */
export async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...(await sourceFiles(full)))
    else if (entry.name.endsWith('.ts')) out.push(full)
  }
  return out
}
