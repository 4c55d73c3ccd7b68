// undici's Agent without the rest of undici. The package's index also loads fetch, WebSocket,
// EventSource, cookies, caches and mocks: some 560 KB that every command compiled at start-up
// and none uses. The Agent and its request API are the same objects the index exports (the
// version is pinned, so these paths are too); the index makes exactly this assignment.

import type { Agent as UndiciAgent } from 'undici'
import api from 'undici/lib/api/index.js'
import AgentImpl from 'undici/lib/dispatcher/agent.js'
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js'

Object.assign(Dispatcher.prototype, api)

export const Agent = AgentImpl as unknown as typeof UndiciAgent
export type Agent = UndiciAgent
