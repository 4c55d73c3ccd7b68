// The log: pino, to <workspace>/.cms-sync/logs/cms-sync.log (log-files.ts), and to stderr with
// -v: readable lines on a terminal (pretty-lines.ts), pino's JSON lines elsewhere. Secrets are
// redacted by key wherever they appear in a logged object, so a token or password passed by
// mistake never reaches the file or the terminal.

import { mkdirSync } from 'node:fs'
import type picocolors from 'picocolors'
import pino, { type DestinationStream, type Level, type Logger } from 'pino'
import { LogFile } from './log-file.js'
import { DEFAULT_LOGS_DAYS, logFilePath, logsDir, pruneLogs, rotateLog } from './log-files.js'
import { type LineSink, prettyStream } from './pretty-lines.js'
import { SECRET_KEYS } from './secret-keys.js'

export { logFilePath } from './log-files.js'
export type { Logger }

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
  /** Also write here (-v): pino's JSON lines, or readable lines when `pretty` is given. */
  stderr?: LineSink
  /** The colours of readable lines (a terminal); absent: JSON lines. */
  pretty?: ReturnType<typeof picocolors.createColors>
  /** How many days the logs of earlier days are kept (cms-sync.yaml retention.logsDays). */
  logsDays?: number
  /** Told once when the log file cannot be written (a full disk): logging to it stops, the run goes on. */
  onFileError?: (error: NodeJS.ErrnoException, file: string) => void
}

/** The file stream of each logger that has one, for settle(). */
const files = new WeakMap<Logger, LogFile>()

export function createLogger(opts: LoggerOptions = {}): Logger {
  const sinks: DestinationStream[] = []
  let file: LogFile | undefined
  if (opts.root) {
    mkdirSync(logsDir(opts.root), { recursive: true })
    // Logs age by the day: the first run of a day, which moves the last one aside, prunes them.
    if (rotateLog(opts.root)) pruneLogs(opts.root, opts.logsDays ?? DEFAULT_LOGS_DAYS)
    // Not pino.destination: see log-file.ts for what a full disk did to it.
    const path = logFilePath(opts.root)
    file = new LogFile(path, (error) => opts.onFileError?.(error, path))
    sinks.push(file)
  }
  if (opts.stderr) {
    const out = opts.stderr
    sinks.push(opts.pretty ? prettyStream(out, opts.pretty) : { write: (line: string) => out.write(line) })
  }
  const options = {
    level: opts.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
  }
  if (sinks.length === 0) return pino({ ...options, enabled: false })
  // Each line to every sink, the same level for all (pino.multistream would filter per stream).
  const stream: DestinationStream =
    sinks.length === 1
      ? sinks[0]!
      : {
          write(line: string) {
            for (const sink of sinks) sink.write(line)
          },
        }
  const logger = pino(options, stream)
  if (file) files.set(logger, file)
  return logger
}

/**
 * Resolves once every line logged so far is in the file (or logging to it failed, or after
 * `maxMs`): before the process ends on a fatal error, and before a test reads the file.
 */
export async function settle(logger: Logger, maxMs = 2_000): Promise<void> {
  const file = files.get(logger)
  if (!file) return
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    new Promise<void>((resolve) => file.flush(() => resolve())),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, maxMs)
    }),
  ])
  clearTimeout(timer)
}
