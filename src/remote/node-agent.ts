// The connection pool under the transport, on Node's own http/https modules: keep-alive
// sockets, TLS verified unless the config opts out, no redirects followed, and three timeouts
// (connecting, waiting for the answer, and silence in the middle of a body).
//
// It replaced undici's Agent: undici is half a megabyte of JavaScript plus a WebAssembly HTTP
// parser compiled at start-up, about 0.2 s of CPU on every command; node:http is in Node's
// snapshot and parses with the native llhttp.

import http from 'node:http'
import https from 'node:https'
import type { Socket } from 'node:net'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

export interface AgentOptions {
  /** Silence allowed while waiting for the answer's headers, and between body chunks. */
  idleTimeoutMs: number
  connectTimeoutMs: number
  rejectUnauthorized: boolean
}

export interface AgentRequest {
  origin: string
  path: string
  method: string
  headers: Record<string, string>
  body?: string | Buffer | Readable | undefined
  signal?: AbortSignal | undefined
}

export interface AgentResponse {
  statusCode: number
  headers: http.IncomingHttpHeaders
  /** Must be read to the end or destroyed; destroying it closes the connection. */
  body: http.IncomingMessage
}

export interface Agent {
  request(request: AgentRequest): Promise<AgentResponse>
  /** Waits for the requests in flight, then closes every connection. */
  close(): Promise<void>
}

/** Codes of this module's own failures (the rest are the socket's: ECONNREFUSED, cert errors, ...). */
export const CONNECT_TIMEOUT = 'CONNECT_TIMEOUT'
export const HEADERS_TIMEOUT = 'HEADERS_TIMEOUT'
export const BODY_TIMEOUT = 'BODY_TIMEOUT'

function failure(code: string, message: string): Error {
  return Object.assign(new Error(message), { code })
}

export function createAgent(opts: AgentOptions): Agent {
  const httpAgent = new http.Agent({ keepAlive: true })
  const httpsAgent = new https.Agent({ keepAlive: true, rejectUnauthorized: opts.rejectUnauthorized })
  let inFlight = 0
  let idle: (() => void) | undefined

  function done(): void {
    inFlight--
    if (inFlight === 0) idle?.()
  }

  function send(request: AgentRequest): Promise<AgentResponse> {
    const origin = new URL(request.origin)
    const secure = origin.protocol === 'https:'
    const headers = { ...request.headers }
    const { body } = request
    // A body of known length is sent with it, not chunked: some servers refuse chunked uploads.
    if ((typeof body === 'string' || Buffer.isBuffer(body)) && !('content-length' in headers))
      headers['content-length'] = String(Buffer.byteLength(body))
    return new Promise<AgentResponse>((resolve, reject) => {
      // The path goes out as given: a URL object would resolve '.' and '..' segments in ids.
      const req = (secure ? https : http).request({
        protocol: origin.protocol,
        hostname: origin.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: origin.port,
        path: request.path,
        method: request.method,
        headers,
        agent: secure ? httpsAgent : httpAgent,
        ...(request.signal ? { signal: request.signal } : {}),
      })
      let response: http.IncomingMessage | undefined
      req.setTimeout(opts.idleTimeoutMs, () => {
        const error = response
          ? failure(BODY_TIMEOUT, 'the answer stopped in the middle of its body')
          : failure(HEADERS_TIMEOUT, 'no answer came')
        if (response) response.destroy(error)
        else req.destroy(error)
      })
      req.on('socket', (socket: Socket) => {
        if (!socket.connecting) return
        const timer = setTimeout(
          () => req.destroy(failure(CONNECT_TIMEOUT, 'the connection was not accepted in time')),
          opts.connectTimeoutMs,
        )
        socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(timer))
        socket.once('close', () => clearTimeout(timer))
      })
      req.on('error', reject)
      req.on('response', (res) => {
        response = res
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res })
      })
      if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) req.end(body)
      else pipeline(body, req).catch((error: unknown) => req.destroy(error as Error))
    })
  }

  return {
    async request(request) {
      inFlight++
      try {
        const res = await send(request)
        // In flight until its body is read or dropped.
        res.body.once('close', done)
        return res
      } catch (error) {
        done()
        throw error
      }
    },
    async close() {
      if (inFlight > 0) await new Promise<void>((resolve) => (idle = resolve))
      httpAgent.destroy()
      httpsAgent.destroy()
    },
  }
}
