// What makes a local web server safe to leave running (docs/page.md "Safety"): it listens on
// loopback only; a request whose Host does not name loopback is refused, so a web page that
// rebinds its own name to 127.0.0.1 (DNS rebinding) gets nothing; a request that changes
// anything must come from this page (its Origin) and carry the per-run secret (in the path, which
// another site cannot know), so another site's form or script cannot act (CSRF). There are no
// CORS headers at all: a cross-origin script can neither read an answer nor send JSON.

import { randomBytes, timingSafeEqual } from 'node:crypto'

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]'])

/** A fresh secret for one run of the server: 32 random bytes, URL-safe. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url')
}

export function sameSecret(given: string, secret: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(secret)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The Host header names loopback and this server's port. */
export function hostAllowed(host: string | undefined, port: number): boolean {
  if (!host) return false
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(host.toLowerCase())
  return m !== null && LOOPBACK_NAMES.has(m[1]!) && Number(m[2]) === port
}

/** The Origin header is this page's own (a loopback name with this port, over http). */
export function originAllowed(origin: string | undefined, port: number): boolean {
  if (!origin) return false
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  return (
    url.protocol === 'http:' && url.pathname === '/' && hostAllowed(url.host, port) && origin === url.origin
  )
}

/** Every answer: no sniffing, no framing, no referrer (the address holds the secret), no caching. */
export const COMMON_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
}

/** The page's policy: its own script and style files only, no inline code, nothing from elsewhere. */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** Media bytes: shown as an image at most, never run. */
export const MEDIA_CSP = "default-src 'none'; sandbox"

/** A workspace-relative path from a request: plain segments only. */
export function safeRelativePath(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= 4096 &&
    !value.startsWith('/') &&
    !value.includes('\\') &&
    !value.includes('\u0000') &&
    value.split('/').every((segment) => segment !== '..' && segment !== '.')
  )
}
