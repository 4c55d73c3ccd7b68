// What must hold after any kill -9: every file whole, the state readable, and no base that
// vouches for a write the server never got (design.md "Three-way state").

import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import type { RemoteClient } from '../../src/remote/index.js'
import { loadState } from '../../src/state/state-file.js'
import { fileBytes, hashText } from '../../src/workspace/codec.js'
import { CODECS } from '../../src/workspace/codecs.js'

export interface CrashCheck {
  tornFiles: string[]
  /** Items whose base equals the local file while the server holds something else, unexplained. */
  falseBases: string[]
  strayTempFiles: string[]
}

/**
 * `remoteTouched` holds the keys (`<id>`, `schema:<id>`) the other client changed since the
 * last clean sync: for those the server may legitimately differ from a base that equals the
 * file (a pull that has not happened yet).
 */
export async function checkAfterCrash(
  root: string,
  server: RemoteClient,
  remoteTouched: Set<string>,
): Promise<CrashCheck> {
  const out: CrashCheck = { tornFiles: [], falseBases: [], strayTempFiles: [] }
  for (const folder of ['content', 'schemas']) {
    const names = await readdir(path.join(root, folder)).catch(() => [] as string[])
    for (const name of names) {
      if (!name.endsWith('.json')) {
        out.strayTempFiles.push(`${folder}/${name}`)
        continue
      }
      try {
        JSON.parse(await readFile(path.join(root, folder, name), 'utf8'))
      } catch {
        out.tornFiles.push(`${folder}/${name}`)
      }
    }
  }
  const state = await loadState(root)
  for (const item of Object.values(state?.items ?? {})) {
    const codec = CODECS.find((c) => c.kind === item.kind)
    if (!codec) continue
    const local = await readFile(path.join(root, item.path), 'utf8').catch(() => undefined)
    if (local === undefined || hashText(local) !== item.baseHash) continue // a pending local change
    const remote = await server.get(item.kind === 'schema' ? 'schema' : 'content', item.id)
    const remoteHash = remote ? fileBytes(codec.toFile(remote)).hash : undefined
    if (remoteHash === item.baseHash) continue
    const key = item.kind === 'schema' ? `schema:${item.id}` : item.id
    if (remoteTouched.has(key)) continue // a remote change not pulled yet
    out.falseBases.push(
      `${item.path}: base ${item.baseHash.slice(0, 8)}, server ${remoteHash?.slice(0, 8) ?? 'missing'}`,
    )
  }
  return out
}
