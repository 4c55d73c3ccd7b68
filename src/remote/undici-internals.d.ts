// The undici files src/remote/undici-agent.ts loads; their public types are undici's own.
declare module 'undici/lib/dispatcher/agent.js' {
  const Agent: unknown
  export default Agent
}
declare module 'undici/lib/dispatcher/dispatcher.js' {
  const Dispatcher: { prototype: object }
  export default Dispatcher
}
declare module 'undici/lib/api/index.js' {
  const api: object
  export default api
}
