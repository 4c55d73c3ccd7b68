// A throwaway self-signed certificate for 127.0.0.1 (openssl), for TLS tests.

import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile } from 'node:fs/promises'
import type { RequestListener } from 'node:http'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'

export async function selfSignedCert(): Promise<{ key: Buffer; cert: Buffer }> {
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
  return { key: await readFile(key), cert: await readFile(cert) }
}

/** An HTTPS server on a free port of 127.0.0.1 with a throwaway self-signed certificate. */
export async function startSelfSignedServer(
  handler: RequestListener,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(await selfSignedCert(), handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
