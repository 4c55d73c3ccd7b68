// What must hold after any kill -9: every file whole (JSON parses, media bytes are a version
// someone wrote, media.yaml parses), the state readable, and no base that vouches for a write
// the server never got (design.md "Three-way state"), for every kind, media included.

import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import type { RemoteClient } from '../../src/remote/index.js'
import { loadState } from '../../src/state/state-file.js'
import { fileBytes, hashText } from '../../src/workspace/codec.js'
import { createCodecs } from '../../src/workspace/codecs.js'
import { hashFile } from '../../src/workspace/media-scan.js'
import type { MediaSession } from './session-media.js'

export interface CrashCheck {
  tornFiles: string[]
  /** Items whose base equals the local file while the server holds something else, unexplained. */
  falseBases: string[]
  strayTempFiles: string[]
  basesChecked: number
}

const JSON_FOLDERS = ['content', 'schemas', 'forms', 'connections']

/**
 * `remoteTouched` holds the keys (`<kind>:<id>`) the other client changed since the last clean
 * sync: for those the server may legitimately differ from a base that equals the file (a pull
 * that has not happened yet). `env` is the environment the CLI ran with (connection secrets).
 */
export async function checkAfterCrash(
  root: string,
  server: RemoteClient,
  media: MediaSession,
  remoteTouched: Set<string>,
  env: NodeJS.ProcessEnv,
): Promise<CrashCheck> {
  const out: CrashCheck = { tornFiles: [], falseBases: [], strayTempFiles: [], basesChecked: 0 }
  for (const folder of JSON_FOLDERS) {
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
  out.tornFiles.push(...(await media.torn()))
  // The codecs the CLI used: the connection codec reads the workspace's reference names and env.
  const codecs = createCodecs({ root, env })
  const listedMedia = new Map((await media.api.list()).map((m) => [m.id, m]))
  const state = await loadState(root)
  for (const item of Object.values(state?.items ?? {})) {
    const file = path.join(root, item.path)
    const key = `${item.kind}:${item.id}`
    let why: string | undefined
    if (item.kind === 'media' && item.media) {
      const local = await hashFile(file).catch(() => undefined)
      if (local !== item.media.sha256) continue // a pending local change
      out.basesChecked++
      const remote = listedMedia.get(item.id)
      if (!remote) why = 'server missing'
      else if (remote.name !== item.media.name || remote.folder !== item.media.folder)
        why = `server at ${remote.folder}/${remote.name}, base at ${item.media.folder}/${item.media.name}`
      else {
        const scratch = path.join(path.dirname(root), 'oracle-download')
        const { sha256 } = await media.api.download(item.id, scratch)
        if (sha256 !== item.media.sha256) why = `server bytes ${sha256.slice(0, 8)}`
      }
    } else {
      const codec = codecs.find((c) => c.kind === item.kind)
      if (!codec) continue
      const local = await readFile(file, 'utf8').catch(() => undefined)
      if (local === undefined || hashText(local) !== item.baseHash) continue // a pending local change
      out.basesChecked++
      const remote = await server.get(codec.kind as Exclude<typeof item.kind, 'media'>, item.id)
      const remoteHash = remote ? fileBytes(codec.toFile(remote)).hash : undefined
      if (remoteHash !== item.baseHash) why = `server ${remoteHash?.slice(0, 8) ?? 'missing'}`
    }
    if (why === undefined || remoteTouched.has(key)) continue // equal, or a remote change not pulled yet
    out.falseBases.push(`${item.path}: base ${item.baseHash.slice(0, 8)}, ${why}`)
  }
  return out
}
