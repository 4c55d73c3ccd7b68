// The `cms-sync emulator` command as a user runs it: the built CLI in a child process.

import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBuilt, MAIN_JS } from '../helpers/build.js'

const MAIN = MAIN_JS

const children: ChildProcess[] = []
const dirs: string[] = []

beforeAll(ensureBuilt, 120_000)

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

type Running = { child: ChildProcess; url: string; exited: Promise<number | null>; stderr: () => string }

function runEmulator(args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [MAIN, 'emulator', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let stdout = ''
  let stderr = ''
  child.stderr!.on('data', (d) => {
    stderr += d
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      stdout += d
      const match = /^listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout)
      if (match) resolve({ child, url: match[1]!, exited, stderr: () => stderr })
    })
    void exited.then((code) => reject(new Error(`emulator exited with ${code} before listening: ${stderr}`)))
  })
}

async function token(url: string): Promise<string> {
  const res = await fetch(`${url}/api/user/login?persist=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin' }),
  })
  return res.text()
}

describe('cms-sync emulator', () => {
  it('prints "listening on URL", serves, and exits 0 on SIGTERM', async () => {
    const emu = await runEmulator(['--dialect', 'upstream', '--project', 'shop', '--environment', 'prod'])
    const res = await fetch(`${emu.url}/api/shop/prod/schemas`)
    expect(res.status).toBe(200)
    emu.child.kill('SIGTERM')
    expect(await emu.exited).toBe(0)
  })

  it('takes users from --user, the first as admin and NAME:PASSWORD:user as a non-admin', async () => {
    const emu = await runEmulator(['--user', 'root:pw1', '--user', 'ann:pw2:user'])
    const login = async (username: string, password: string) =>
      fetch(`${emu.url}/api/user/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password }),
      })
    const rootToken = await (await login('root', 'pw1')).text()
    const annToken = await (await login('ann', 'pw2')).text()
    expect((await login('admin', 'admin')).status).toBe(401)
    const users = (t: string) => fetch(`${emu.url}/api/users`, { headers: { authorization: `Bearer ${t}` } })
    expect((await users(rootToken)).status).toBe(200)
    expect((await users(annToken)).status).toBe(403)
    emu.child.kill('SIGINT')
    expect(await emu.exited).toBe(0)
  })

  it('exits 2 on a bad flag value', () => {
    for (const args of [
      ['--dialect', 'nope'],
      ['--faults', 'boom=1'],
      ['--port', 'x'],
      ['--environment', 'project'],
    ]) {
      let code = 0
      try {
        execFileSync(process.execPath, [MAIN, 'emulator', ...args], { stdio: 'pipe' })
      } catch (error) {
        code = (error as { status: number }).status
      }
      expect(code).toBe(2)
    }
  })

  it('keeps every acknowledged write through a kill -9 in the middle of writing', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-emu-kill-'))
    dirs.push(dataDir)
    const first = await runEmulator(['--data', dataDir])
    const auth = await token(first.url)
    const acknowledged: string[] = []
    let stop = false
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const id = `w${w}-${i}`
        try {
          const res = await fetch(`${first.url}/api/demo/live/content/${id}?create=true`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', cookie: `token=${auth}` },
            body: JSON.stringify({ id, schemaId: 'page', properties: { text: 'x'.repeat(2000), i } }),
          })
          if (res.status === 200) acknowledged.push(id)
        } catch {
          return // the server died under us
        }
      }
    }
    let writersDone = false
    const writers = Promise.all([0, 1, 2, 3].map(writer)).then(() => {
      writersDone = true
    })
    while (acknowledged.length < 300 && !writersDone) await new Promise((r) => setTimeout(r, 10))
    first.child.kill('SIGKILL')
    await first.exited
    stop = true
    await writers

    const second = await runEmulator(['--data', dataDir])
    const list = await fetch(`${second.url}/api/demo/live/content`, { headers: { cookie: `token=${auth}` } })
    const ids = new Set(((await list.json()) as Array<{ id: string }>).map((c) => c.id))
    expect(acknowledged.length).toBeGreaterThanOrEqual(300)
    expect(acknowledged.filter((id) => !ids.has(id))).toEqual([])
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
  })
})
