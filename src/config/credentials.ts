// Tokens live outside the workspace (never committed): $XDG_CONFIG_HOME/cms-sync/credentials.yaml,
// readable by the user only, one entry per server URL. CMS_SYNC_TOKEN wins over the file, for CI.

import { chmod, mkdir, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { isMap, parseDocument } from 'yaml'
import { writeFileAtomically } from '../util/atomic-write.js'
import { ConfigError } from './errors.js'
import { refuseUnnamedTarget, requireNamedTarget, serverKey } from './token-target.js'

const HEADER = '# cms-sync credentials: one token per server. Keep this file private (mode 600).\n'

export function credentialsPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME?.trim()
    ? env.XDG_CONFIG_HOME
    : path.join(env.HOME || os.homedir(), '.config')
  return path.join(base, 'cms-sync', 'credentials.yaml')
}

/** The key a server is stored under: one spelling per server (token-target.ts). */
export { serverKey }

async function readCredentials(file: string): Promise<Record<string, { token?: unknown }>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw error
  }
  const doc = parseDocument(text)
  if (doc.errors.length > 0 || (doc.contents !== null && !isMap(doc.contents)))
    throw new ConfigError(`${file}: not a valid credentials file; remove it and run \`cms-sync login\` again`)
  const data = (doc.toJS() ?? {}) as { servers?: Record<string, { token?: unknown }> }
  return data.servers ?? {}
}

export async function saveToken(env: NodeJS.ProcessEnv, server: string, token: string): Promise<void> {
  const file = credentialsPath(env)
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
  const servers = await readCredentials(file)
  servers[serverKey(server)] = { token }
  await writeServers(file, servers)
}

/** Removes the server's token from the credentials file; the token it held, if any. */
export async function forgetToken(env: NodeJS.ProcessEnv, server: string): Promise<string | undefined> {
  const file = credentialsPath(env)
  const servers = await readCredentials(file)
  const key = serverKey(server)
  const token = servers[key]?.token
  if (!(key in servers)) return undefined
  delete servers[key]
  await writeServers(file, servers)
  return typeof token === 'string' && token !== '' ? token : undefined
}

async function writeServers(file: string, servers: Record<string, { token?: unknown }>): Promise<void> {
  const body = Object.entries(servers)
    .map(
      ([key, entry]) =>
        `  ${JSON.stringify(key)}:\n    token: ${JSON.stringify(String(entry.token ?? ''))}\n`,
    )
    .join('')
  // mode applies to the temp file that replaces the old one, so an existing file with a wider
  // mode is narrowed too; the chmod covers a file system that ignores the create mode.
  await writeFileAtomically(file, `${HEADER}servers:\n${body}`, { mode: 0o600 })
  await chmod(file, 0o600)
}

/** Where a command's token came from: what a refusal names, so the user knows what to fix. */
export type TokenSource = 'env' | 'file' | 'none'

export async function resolveTokenSource(
  env: NodeJS.ProcessEnv,
  server: string,
): Promise<{ token: string | undefined; source: TokenSource; file: string }> {
  const file = credentialsPath(env)
  const token = await resolveToken(env, server)
  const source = env.CMS_SYNC_TOKEN?.trim() ? 'env' : token === undefined ? 'none' : 'file'
  return { token, source, file }
}

/**
 * The token for `server`: CMS_SYNC_TOKEN, else the credentials file's. Every way a command takes
 * a token comes here, so the target variables are checked before any token leaves
 * (token-target.ts): a server they do not name gets no token, from either place.
 */
export async function resolveToken(env: NodeJS.ProcessEnv, server: string): Promise<string | undefined> {
  refuseUnnamedTarget(env, { server })
  requireNamedTarget(env, ['server'])
  const fromEnv = env.CMS_SYNC_TOKEN?.trim()
  if (fromEnv) return fromEnv
  const servers = await readCredentials(credentialsPath(env))
  const token = servers[serverKey(server)]?.token
  return typeof token === 'string' && token !== '' ? token : undefined
}
