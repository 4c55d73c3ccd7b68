// TLS is verified unless the workspace opts out (tls.insecure) for its server.

import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createRemoteClient } from '../../src/remote/index.js'
import { selfSignedCert } from '../helpers/self-signed.js'

let server: Server
let url: string

beforeAll(async () => {
  server = createServer(await selfSignedCert(), (_req, res) => {
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

test('an https:// address on a plain-http port says so, instead of blaming a certificate', async () => {
  const { createServer: createHttpServer } = await import('node:http')
  const plain = createHttpServer((_req, res) => res.writeHead(200).end('[]'))
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', () => resolve()))
  const port = (plain.address() as AddressInfo).port
  const client = await createRemoteClient({ ...options(), server: `https://127.0.0.1:${port}` })
  try {
    const error = await client.list('content').catch((e: unknown) => e)
    expect((error as Error).message).toMatch(/does not speak TLS on that port.*use http:\/\//)
    expect((error as Error).message).not.toMatch(/certificate/)
    expect(client.stats().requests).toBe(1)
  } finally {
    await client.close()
    plain.closeAllConnections()
    await new Promise((resolve) => plain.close(resolve))
  }
})
