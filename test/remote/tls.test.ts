// TLS is verified unless the workspace opts out (tls.insecure) for its server.

import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createRemoteClient } from '../../src/remote/index.js'

let server: Server
let url: string

beforeAll(async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-tls-'))
  const key = path.join(dir, 'key.pem')
  const cert = path.join(dir, 'cert.pem')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
    ],
    { stdio: 'ignore' },
  )
  server = createServer({ key: await readFile(key), cert: await readFile(cert) }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('[]')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const options = () => ({
  server: url,
  project: 'demo',
  environment: 'live',
  dialect: 'spec' as const,
  rateLimit: { requestsPerSecond: 100, concurrency: 1 },
  maxRetries: 3,
})

test('a self-signed certificate is refused at once, with the way out named', async () => {
  const client = await createRemoteClient(options())
  try {
    const error = await client.list('content').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'listing' })
    expect((error as Error).message).toMatch(/TLS certificate was refused.*tls.insecure: true/)
    // A certificate problem does not go away by asking again.
    expect(client.stats().requests).toBe(1)
  } finally {
    await client.close()
  }
})

test('tls.insecure lets the workspace talk to that server anyway', async () => {
  const client = await createRemoteClient({ ...options(), tlsInsecure: true })
  try {
    expect(await client.list('content')).toEqual([])
  } finally {
    await client.close()
  }
})
