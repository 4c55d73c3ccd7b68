// Initial pull of many media files: `cms-sync pull` (the built CLI, its own process) against a
// naive script (list, then download each file in turn and write it), on the same emulator.
// Prints one JSON line.   npm run build && npx tsx bench/media-pull.ts --files 2000 --kb 20

import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '2000' },
    kb: { type: 'string', default: '20' },
    dialect: { type: 'string', default: 'spec' },
  },
})
const files = Number(values.files)
const kb = Number(values.kb)
const dialect = values.dialect as 'spec' | 'upstream'

const scratch = await mkdtemp(path.join(tmpdir(), 'cms-sync-bench-'))
const seed = path.join(scratch, 'seed')
const index: string[] = []
for (let i = 0; i < files; i++) {
  const rel = `folder-${Math.floor(i / 100)}/image-${i}.png`
  await mkdir(path.join(seed, 'media', path.dirname(rel)), { recursive: true })
  await writeFile(path.join(seed, 'media', rel), randomBytes(kb * 1024))
  index.push(`${rel}: "${randomBytes(8).toString('hex')}"`)
}
await writeFile(path.join(seed, 'media.yaml'), `${index.join('\n')}\n`)
// The emulator in its own process, as a real server would be: neither side shares its event loop.
const cli = path.join(import.meta.dirname, '..', 'dist', 'cli', 'main.js')
const server = spawn(
  process.execPath,
  [cli, 'emulator', '--port', '0', '--seed', seed, '--dialect', dialect],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
)
const url = await new Promise<string>((resolve, reject) => {
  let out = ''
  server.stdout.on('data', (chunk) => {
    out += String(chunk)
    const found = /listening on (http:\/\/\S+)/.exec(out)
    if (found) resolve(found[1]!)
  })
  server.on('exit', (code) => reject(new Error(`the emulator exited (${code})`)))
})
const emulator = { url }
const login = await fetch(`${url}/api/user/login?persist=false`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ username: 'admin', password: 'admin' }),
})
const token = (await login.text()).trim()

async function naive(dir: string): Promise<number> {
  const started = performance.now()
  const headers = { cookie: `token=${token}` }
  const list = (await (await fetch(`${emulator.url}/api/demo/live/media`, { headers })).json()) as {
    id: string
    name: string
    folder: string
  }[]
  for (const item of list) {
    const bytes = Buffer.from(await (await fetch(`${emulator.url}/media/demo/live/${item.id}`)).arrayBuffer())
    const target = path.join(dir, item.folder, item.name)
    await mkdir(path.dirname(target), { recursive: true })
    await writeFile(target, bytes)
  }
  return performance.now() - started
}

async function cmsSync(dir: string): Promise<number> {
  const config = `server: ${emulator.url}\nproject: demo\nenvironment: live\nresources: [media]\nrateLimit: { requestsPerSecond: 1000, concurrency: 4 }\ndialect: ${dialect}\n`
  await mkdir(dir, { recursive: true })
  await writeFile(path.join(dir, 'cms-sync.yaml'), config)
  const started = performance.now()
  // Not spawnSync: the emulator answers from this process's event loop.
  const child = spawn(process.execPath, [cli, '-C', dir, 'pull', '--json'], {
    // In CI a token is sent only to the target the environment names.
    env: {
      ...process.env,
      CMS_SYNC_TOKEN: token,
      CMS_SYNC_SERVER: emulator.url,
      CMS_SYNC_PROJECT: 'demo',
      CMS_SYNC_ENVIRONMENT: 'live',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk)
  })
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve))
  const ms = performance.now() - started
  if (status !== 0) throw new Error(`cms-sync pull failed (${status}): ${stderr}`)
  return ms
}

// The CLI's process start-up is part of its time, as for a user.
const naiveMs = await naive(path.join(scratch, 'naive'))
const cliMs = await cmsSync(path.join(scratch, 'cli'))
console.log(
  JSON.stringify({
    files,
    kb,
    dialect,
    naiveMs: Math.round(naiveMs),
    cmsSyncMs: Math.round(cliMs),
    ratio: +(cliMs / naiveMs).toFixed(2),
  }),
)
server.kill('SIGTERM')
await rm(scratch, { recursive: true, force: true })
