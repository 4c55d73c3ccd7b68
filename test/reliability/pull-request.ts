// What the hostile pull request tests set up the same way: git with a fixed identity, the
// environment of the CI job the recipe runs, a lock a pull request has retargeted, and the
// pull request's own host that keeps what it hears.

import { execFileSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import type { World } from '../helpers/sync-world.js'
import { json, startHostileServer } from './hostile-server.js'

/** git in `cwd`, with an identity and no system config (the machine's own must not leak in). */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  })
}

/** The recipe's CI job against `w`: CI set, its target named in variables; `extra` on top. */
export function ciJob(w: World, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...w.env,
    CI: 'true',
    CMS_SYNC_SERVER: w.proxy.url,
    CMS_SYNC_PROJECT: 'demo',
    CMS_SYNC_ENVIRONMENT: 'live',
    ...extra,
  }
}

/** The lock with its target line pointing at `server` (what a pull request can commit). */
export async function retargetLock(w: World, server: string): Promise<void> {
  const lock = await readFile(w.file('cms-sync.lock'), 'utf8')
  const lines = lock.split('\n').map((line) => {
    if (!line.startsWith('{"lock"')) return line
    return JSON.stringify({ ...JSON.parse(line), server })
  })
  await writeFile(w.file('cms-sync.lock'), lines.join('\n'))
}

export interface Thief {
  url: string
  /** What `keep` made of each request, in order. */
  heard: string[]
  close(): Promise<void>
}

/** A host a pull request names: each request (with its body) kept as `keep` says, answered 404. */
export async function startThief(keep: (req: IncomingMessage, body: string) => string): Promise<Thief> {
  const heard: string[] = []
  const server = await startHostileServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => {
      body += String(chunk)
    })
    req.on('end', () => {
      heard.push(keep(req, body))
      json(res, 404, {})
    })
  })
  return { url: server.url, heard, close: server.close }
}
