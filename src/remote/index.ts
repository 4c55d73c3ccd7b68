// The remote API client: import from here.
export type { Answer, RetryCause } from './answer.js'
export { endToken, type LoginOptions, type LoginResult, login, whoAmI } from './auth.js'
export { CAPABILITIES, type Capabilities } from './capabilities.js'
export {
  createRemoteClient,
  isInherited,
  type PutOptions,
  type RemoteClient,
  type RemoteClientOptions,
  type RemoteObject,
  type RemoteResponse,
  type RequestOptions,
} from './client.js'
export { type Dialect, NATIVE_SCHEMA_IDS, type RemoteKind } from './dialect.js'
export * from './errors.js'
export type { RequestStats } from './queue.js'
