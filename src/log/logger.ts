// The log: pino, to <workspace>/.cms-sync/logs/cms-sync.log (and stderr on request). Secrets
// are redacted by key wherever they appear in a logged object, so a token or password passed
// by mistake never reaches the file.

import path from 'node:path'
import pino, { type DestinationStream, type Level, type Logger } from 'pino'

export type { Logger }

import { LogFile } from './log-file.js'
import { SECRET_KEYS } from './secret-keys.js'

/** Redaction paths: the secret keys at the top level and up to two levels down, plus headers. */
export const REDACT_PATHS: string[] = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((key) => `*.${key}`),
  ...SECRET_KEYS.map((key) => `*.*.${key}`),
  'headers["set-cookie"]',
  '*.headers["set-cookie"]',
  'req.headers.*',
]

export interface LoggerOptions {
  /** The workspace: logs go to <root>/.cms-sync/logs/cms-sync.log. */
  root?: string
  level?: Level | 'silent'
  /** Also write to stderr (for -v in a terminal). */
  stderr?: boolean
  /** Told once when the log file cannot be written (a full disk): logging to it stops, the run goes on. */
  onFileError?: (error: NodeJS.ErrnoException, file: string) => void
}

export function logFilePath(root: string): string {
  return path.join(root, '.cms-sync', 'logs', 'cms-sync.log')
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const streams: { stream: DestinationStream }[] = []
  if (opts.root) {
    const file = logFilePath(opts.root)
    // Not pino.destination: see log-file.ts for what a full disk did to it.
    streams.push({ stream: new LogFile(file, (error) => opts.onFileError?.(error, file)) })
  }
  if (opts.stderr) streams.push({ stream: pino.destination({ dest: 2, sync: true }) })
  const options = {
    level: opts.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
  }
  if (streams.length === 0) return pino({ ...options, enabled: false })
  if (streams.length === 1) return pino(options, streams[0]!.stream)
  return pino(options, pino.multistream(streams.map((s) => ({ stream: s.stream, level: 'trace' as const }))))
}
