// A client of the emulator's project (demo / live) as the remote/ tests build it: the dialect
// detected, a short backoff and a rate that never slows a test down.

import { createRemoteClient, type RemoteClient, type RemoteClientOptions } from '../../src/remote/index.js'

/** A client of `server` with `token`; `extra` overrides any option. */
export function demoClient(
  server: string,
  token: string,
  extra: Partial<RemoteClientOptions> = {},
): Promise<RemoteClient> {
  return createRemoteClient({
    server,
    project: 'demo',
    environment: 'live',
    token,
    dialect: 'auto',
    rateLimit: { requestsPerSecond: 500, concurrency: 4 },
    backoff: { baseMs: 5, capMs: 20 },
    ...extra,
  })
}

/** A content item of the demo project's `page` schema, as the server stores it. */
export const page = (id: string, title: string) => ({
  id,
  parentId: '',
  schemaId: 'page',
  sort: 1,
  isPublished: false,
  properties: { title },
  settings: {},
})
