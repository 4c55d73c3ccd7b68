// Shared by the emulator tests: start an emulator on a free port and talk to it over real HTTP.

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach } from 'vitest'
import { type Emulator, type EmulatorOptions, startEmulator } from '../../src/emulator/index.js'

// biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON the server sent
export type Res = { status: number; text: string; headers: Headers; json<T = any>(): T }

const running: Emulator[] = []

/** Starts an emulator that is closed after the current test. */
export async function start(options: EmulatorOptions = {}): Promise<Emulator> {
  const emulator = await startEmulator(options)
  running.push(emulator)
  return emulator
}

const dirs: string[] = []

/** A fresh folder under the system temp folder, removed after the current test. */
export function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cms-emu-test-'))
  dirs.push(dir)
  return dir
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()))
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

export type CallOptions = {
  body?: unknown
  /** Sent as is (not JSON-encoded) when a string or Buffer. */
  raw?: string | Buffer | FormData
  token?: string
  /** How the token travels. */
  via?: 'cookie' | 'query' | 'bearer'
  headers?: Record<string, string>
}

export async function call(
  emulator: Emulator,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Res> {
  const headers: Record<string, string> = { ...options.headers }
  let url = `${emulator.url}${path}`
  if (options.token) {
    const via = options.via ?? 'cookie'
    if (via === 'cookie') headers.cookie = `token=${options.token}`
    else if (via === 'bearer') headers.authorization = `Bearer ${options.token}`
    else url += `${url.includes('?') ? '&' : '?'}token=${options.token}`
  }
  let body: string | Buffer | FormData | undefined
  if (options.raw !== undefined) body = options.raw
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const response = await fetch(url, { method, headers, body, redirect: 'manual' })
  const text = await response.text()
  return {
    status: response.status,
    text,
    headers: response.headers,
    json: () => JSON.parse(text),
  }
}

/** Logs in over HTTP and returns the token. */
export async function login(emulator: Emulator, username = 'admin', password = 'admin'): Promise<string> {
  const res = await call(emulator, 'POST', '/api/user/login?persist=false', { body: { username, password } })
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`)
  return res.text
}

/** A client bound to one emulator and token, with P = /api/:project/:environment. */
export function client(emulator: Emulator, token: string) {
  const P = `/api/${emulator.project}/${emulator.environment}`
  return {
    P,
    get: (path: string, o: CallOptions = {}) =>
      call(emulator, 'GET', path.replace('P/', `${P}/`), { token, ...o }),
    post: (path: string, body?: unknown, o: CallOptions = {}) =>
      call(emulator, 'POST', path.replace('P/', `${P}/`), { token, body, ...o }),
    del: (path: string, o: CallOptions = {}) =>
      call(emulator, 'DELETE', path.replace('P/', `${P}/`), { token, ...o }),
    put: (path: string, o: CallOptions = {}) =>
      call(emulator, 'PUT', path.replace('P/', `${P}/`), { token, ...o }),
  }
}

export const DIALECTS = ['spec', 'upstream'] as const
