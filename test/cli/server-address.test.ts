// The server address a user types: without a scheme, or the port of some other web server.
// Both must say what is wrong in words, never `TypeError: Invalid URL` nor "speaks the
// upstream dialect" for a server that is not a cms-sync server at all.

import { access, mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { cli } from '../helpers/cli.js'

let foreign: Server
let foreignUrl: string

beforeAll(async () => {
  // What a port with some other web server on it answers: an HTML 404 page for every path.
  foreign = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/html' })
    res.end('<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>')
  })
  await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve))
  foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise((resolve) => foreign.close(resolve))
})

const tmp = () => mkdtemp(path.join(os.tmpdir(), 'cms-sync-address-'))
const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  )

describe('a server address without a scheme', () => {
  test('login --server 127.0.0.1:28431 names what is expected and suggests http://', async () => {
    const result = await cli(
      ['login', '--server', '127.0.0.1:28431', '--username', 'a', '--password-stdin'],
      {
        cwd: await tmp(),
        stdin: 'secret\n',
      },
    )
    expect(result.stderr).not.toContain('Invalid URL')
    expect(result.stderr).toContain(
      '--server: expected an http:// or https:// URL without user, password, query or fragment, got "127.0.0.1:28431"',
    )
    expect(result.stderr).toContain('http://127.0.0.1:28431')
    expect(result.exitCode).toBe(2)
  })

  test('init --server localhost:8080 is refused the same way and writes nothing', async () => {
    const cwd = await tmp()
    const result = await cli(
      ['init', 'ws', '--server', 'localhost:8080', '--project', 'demo', '--environment', 'live'],
      { cwd },
    )
    expect(result.stderr).toContain('--server: expected an http:// or https:// URL')
    expect(result.stderr).toContain('http://localhost:8080')
    expect(result.exitCode).toBe(2)
    expect(await exists(path.join(cwd, 'ws', 'cms-sync.yaml'))).toBe(false)
  })
})

describe('a port where another web server answers', () => {
  test('init says it is not a cms-sync server, and writes nothing', async () => {
    const cwd = await tmp()
    const result = await cli(
      ['init', 'ws', '--server', foreignUrl, '--project', 'demo', '--environment', 'live'],
      { cwd },
    )
    expect(result.stdout).not.toContain('dialect')
    expect(result.stderr).toContain(
      `${foreignUrl} is not a cms-sync server (HTML 404 at /api/demo/live/schema)`,
    )
    expect(result.exitCode).toBe(1)
    expect(await exists(path.join(cwd, 'ws', 'cms-sync.yaml'))).toBe(false)
  })

  test('login says the same', async () => {
    const result = await cli(['login', '--server', foreignUrl, '--username', 'a', '--password-stdin'], {
      cwd: await tmp(),
      stdin: 'secret\n',
      env: { XDG_CONFIG_HOME: await tmp() },
    })
    expect(result.stderr).toContain(`${foreignUrl} is not a cms-sync server (HTML 404 at /api/user/login)`)
    expect(result.exitCode).toBe(1)
  })

  test('a sync against it says the same', async () => {
    const root = await tmp()
    await mkdir(root, { recursive: true })
    await writeFile(
      path.join(root, 'cms-sync.yaml'),
      `server: ${foreignUrl}\nproject: demo\nenvironment: live\ndialect: auto\n`,
    )
    const result = await cli(['-C', root, 'status'], { cwd: root, env: { CMS_SYNC_TOKEN: 'tok' } })
    expect(result.stderr).toContain(
      `${foreignUrl} is not a cms-sync server (HTML 404 at /api/demo/live/schema)`,
    )
    expect(result.exitCode).not.toBe(0)
  })
})
