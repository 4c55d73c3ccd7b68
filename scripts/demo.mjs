#!/usr/bin/env node
// The demo: a real emulator seeded with example-workspace, and what a user does with it.
// Every step runs the built CLI as a separate process, exactly as a user would type it.

import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const cli = join(repo, 'dist', 'cli', 'main.js')
const scratch = mkdtempSync(join(tmpdir(), 'cms-sync-demo-'))
const workspace = join(scratch, 'site')
// Keep the demo's token out of the user's real credentials file.
const env = { ...process.env, XDG_CONFIG_HOME: join(scratch, 'config'), CMS_SYNC_TOKEN: '' }
delete env.CMS_SYNC_TOKEN

const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[22m` : s)
const say = (text) => console.log(`\n${bold(`# ${text}`)}`)

function cmsSync(args, { input, expect = [0] } = {}) {
  console.log(bold(`$ cms-sync ${args.join(' ')}`))
  const result = spawnSync(process.execPath, [cli, ...args], {
    env,
    input,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'inherit', 'inherit'],
  })
  if (!expect.includes(result.status)) {
    throw new Error(`cms-sync ${args[0]} exited ${result.status}, expected ${expect.join(' or ')}`)
  }
  if (result.status !== 0) console.log(`(exit code ${result.status})`)
}

function editJson(relPath, change) {
  const file = join(workspace, relPath)
  const value = JSON.parse(readFileSync(file, 'utf8'))
  change(value)
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`)
}

async function startEmulator() {
  const child = spawn(
    process.execPath,
    [cli, 'emulator', '--port', '0', '--seed', join(repo, 'example-workspace')],
    {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  const lines = createInterface({ input: child.stdout })
  for await (const line of lines) {
    const match = /^listening on (\S+)/.exec(line)
    if (match) return { child, url: match[1] }
  }
  throw new Error('the emulator stopped before it was ready')
}

/** fetch, once more when a kept-alive connection was closed by the server meanwhile. */
async function fetch(url, init) {
  try {
    return await globalThis.fetch(url, init)
  } catch {
    return globalThis.fetch(url, init)
  }
}

/** A colleague edits a page in the CMS while we work locally. */
async function colleagueEdits(url, id, change) {
  const login = await fetch(`${url}/api/user/login?persist=false`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin' }),
  })
  const token = await login.text()
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const item = await (await fetch(`${url}/api/demo/live/content/${id}`, { headers })).json()
  change(item)
  const saved = await fetch(`${url}/api/demo/live/content/${id}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(item),
  })
  if (!saved.ok) throw new Error(`the colleague's edit failed: ${saved.status} ${await saved.text()}`)
}

const { child: emulator, url } = await startEmulator()
try {
  say(`An emulator of the CMS is running at ${url}, seeded with example-workspace/ (admin:admin).`)

  say('Set up a workspace for project "demo", environment "live", and log in.')
  cmsSync(['init', workspace, '--server', url, '--project', 'demo', '--environment', 'live'])
  cmsSync(['-C', workspace, 'login', '--username', 'admin', '--password-stdin'], { input: 'admin\n' })

  say('Pull the whole environment into plain files.')
  cmsSync(['-C', workspace, 'pull'])
  cmsSync(['-C', workspace, 'status'])

  say('Edit the home page locally, look at the change, and push it.')
  editJson('content/home.json', (page) => {
    page.properties.heading.en = 'Coffee roasted by the sea'
  })
  cmsSync(['-C', workspace, 'status'])
  cmsSync(['-C', workspace, 'diff', 'content/home.json'], { expect: [0, 1] })
  cmsSync(['-C', workspace, 'push'])

  say('Two people edit one page: a colleague changes the English title in the CMS, you the German one.')
  await colleagueEdits(url, 'about', (page) => {
    page.properties.title.en = 'About Northwind'
  })
  editJson('content/about.json', (page) => {
    page.properties.title.de = 'Über Northwind'
  })
  cmsSync(['-C', workspace, 'status'])

  say('Different leaves merge: sync lands both edits on both sides, no conflict.')
  cmsSync(['-C', workspace, 'sync'])
  const about = JSON.parse(readFileSync(join(workspace, 'content/about.json'), 'utf8'))
  console.log(`content/about.json title: ${JSON.stringify(about.properties.title)}`)

  say('Both change the same leaf: only that leaf is a conflict, named with its three values.')
  await colleagueEdits(url, 'about', (page) => {
    page.properties.title.en = 'About the roastery'
    page.sort = 5
  })
  editJson('content/about.json', (page) => {
    page.properties.title.en = 'Who we are'
  })
  cmsSync(['-C', workspace, 'sync'], { expect: [3] })

  say("Keep your value for that leaf; the colleague's other edit still lands. Everything is in step again.")
  cmsSync(['-C', workspace, 'resolve', 'content/about.json#/properties/title/en', '--keep', 'local'])
  cmsSync(['-C', workspace, 'status'])

  say('What next')
  console.log(`The workspace is at ${workspace}; the emulator stops when this demo ends.
  - Run your own emulator:  npx cms-sync emulator --port 8080 --seed example-workspace
  - Point at a real server: cms-sync init my-site --server https://cms.example.com --project <id> --environment live
                            cms-sync -C my-site login --username <you>
                            cms-sync -C my-site pull
  - Keep it in step while you edit: cms-sync -C my-site watch
  - Commit the folder to git; .cms-sync/ is ignored, media.yaml keeps every media id.`)
} finally {
  emulator.kill('SIGTERM')
  if (!process.env.CMS_SYNC_DEMO_KEEP) rmSync(scratch, { recursive: true, force: true })
}
