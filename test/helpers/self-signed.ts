// A throwaway self-signed certificate for 127.0.0.1 (openssl), for TLS tests.

import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile } from 'node:fs/promises'
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
