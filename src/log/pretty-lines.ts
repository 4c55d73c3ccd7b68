// `-v` on a terminal: pino's JSON lines turned into lines a person reads, one per entry:
//
//   09:04:51.704 GET /api/demo/live/schema 200 10ms
//   09:04:51.705 remote dialect dialect=spec
//   09:04:52.310 WARN watch: full reconcile failed error="…" retryInMs=2000
//
// A stream of our own that pino writes its serialised lines to, after redaction, rather than
// pino-pretty: a runtime dependency with thirteen dependencies of its own (a worker-thread transport by
// default) for what is here a few lines that know our two kinds of entry (requests, and a
// message with fields). Where stderr is not a terminal, -v keeps pino's JSON lines, which
// tools and `jq` read (logger.ts).

import type picocolors from 'picocolors'
import { printable } from '../util/printable.js'

type Colors = ReturnType<typeof picocolors.createColors>

export interface LineSink {
  write(text: string): unknown
}

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
}
/** pino's own fields, shown in their place rather than as key=value; argv is in the run line's message. */
const OWN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'err', 'argv'])

function clock(ms: number): string {
  const d = new Date(ms)
  const two = (n: number) => String(n).padStart(2, '0')
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`
}

function shown(value: unknown): string {
  if (typeof value === 'string') return printable(/^[^\s"=]+$/.test(value) ? value : JSON.stringify(value))
  return printable(JSON.stringify(value) ?? String(value))
}

/** One readable line (plus the stack of an error entry) for one of pino's JSON lines. */
export function prettyLine(json: string, pc: Colors): string {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(json) as Record<string, unknown>
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`
  }
  const level = typeof entry.level === 'number' ? entry.level : 30
  const time = pc.dim(clock(typeof entry.time === 'number' ? entry.time : Date.now()))
  const parts = [time]
  if (level >= 40) parts.push(level >= 50 ? pc.red(LEVELS[level] ?? 'ERROR') : pc.yellow(LEVELS[level]!))
  // An error with its stack (a stop, logged by the CLI): the stack goes below the line.
  const err = [entry.err, entry.error].find(
    (value): value is { stack?: unknown; message?: unknown } => typeof value === 'object' && value !== null,
  )
  const fields = Object.entries(entry).filter(([key, value]) => !OWN.has(key) && value !== err)
  if (typeof entry.method === 'string' && typeof entry.route === 'string') {
    // A request: method, route, status, time taken; a failed one its error code.
    const status = typeof entry.status === 'number' ? entry.status : undefined
    const statusText =
      status === undefined
        ? pc.red(printable(String(entry.error ?? entry.msg)))
        : status >= 400
          ? pc.red(status)
          : String(status)
    parts.push(`${printable(`${entry.method} ${entry.route}`)} ${statusText}`)
    if (typeof entry.ms === 'number') parts.push(pc.dim(`${entry.ms}ms`))
    const rest = fields.filter(([key]) => !['method', 'route', 'status', 'ms', 'error'].includes(key))
    parts.push(...rest.map(([key, value]) => pc.dim(`${key}=${shown(value)}`)))
  } else {
    parts.push(printable(String(entry.msg ?? '')))
    parts.push(...fields.map(([key, value]) => pc.dim(`${key}=${shown(value)}`)))
  }
  let line = `${parts.filter((part) => part !== '').join(' ')}\n`
  if (err) {
    const text = typeof err.stack === 'string' ? err.stack : String(err.message ?? '')
    line += `${text
      .split('\n')
      .map((l) => `    ${printable(l.trim())}`)
      .join('\n')}\n`
  }
  return line
}

/** A pino destination that writes readable lines to `out`. */
export function prettyStream(out: LineSink, pc: Colors): LineSink {
  return {
    write(text: string) {
      // pino writes one entry per call, each ending in a newline.
      for (const json of text.split('\n')) if (json !== '') out.write(prettyLine(json, pc))
      return true
    },
  }
}
