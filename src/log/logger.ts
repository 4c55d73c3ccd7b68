// The log: pino, to <workspace>/.cms-sync/logs/cms-sync.log (log-files.ts), and to stderr with
// -v: readable lines on a terminal (pretty-lines.ts), pino's JSON lines elsewhere. Secrets are
// redacted by key wherever they appear in a logged object, so a token or password passed by
// mistake never reaches the file or the terminal.

import { mkdirSync } from 'node:fs'
import type picocolors from 'picocolors'
import pino, { type DestinationStream, type Level, type Logger } from 'pino'
import { DEFAULT_LOGS_DAYS, logFilePath, logsDir, pruneLogs, rotateLog } from './log-files.js'
import { type LineSink, prettyStream } from './pretty-lines.js'

export { logFilePath } from './log-files.js'
export type { Logger }

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
  /** Also write here (-v): pino's JSON lines, or readable lines when `pretty` is given. */
  stderr?: LineSink
  /** The colours of readable lines (a terminal); absent: JSON lines. */
  pretty?: ReturnType<typeof picocolors.createColors>
  /** How many days the logs of earlier days are kept (cms-sync.yaml retention.logsDays). */
  logsDays?: number
}

type FileStream = ReturnType<typeof pino.destination>

/** The file stream of each logger that has one, for settle(). */
const files = new WeakMap<Logger, FileStream>()

export function createLogger(opts: LoggerOptions = {}): Logger {
  const sinks: DestinationStream[] = []
  let file: FileStream | undefined
  if (opts.root) {
    mkdirSync(logsDir(opts.root), { recursive: true })
    rotateLog(opts.root)
    pruneLogs(opts.root, opts.logsDays ?? DEFAULT_LOGS_DAYS)
    file = pino.destination({ dest: logFilePath(opts.root), sync: false, mkdir: true })
    // A log that cannot be written (a full disk) must not end the run it records.
    file.on('error', () => {})
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Resolves once every line logged so far is in the file (or after `maxMs`): before the process
 * ends on a fatal error, and before a test reads the file. sonic-boom's own flush(cb) calls back
 * at once in the mode pino.destination uses (no minimum length), written or not.
 */
export async function settle(logger: Logger, maxMs = 2_000): Promise<void> {
  const file = files.get(logger) as
    | (FileStream & { fd: number; _writing: boolean; _len: number; destroyed?: boolean })
    | undefined
  if (!file) return
  const until = Date.now() + maxMs
  while ((file.fd < 0 || file._writing || file._len > 0) && Date.now() < until && !file.destroyed)
    await sleep(5)
}
