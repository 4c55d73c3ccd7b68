// The log file as a pino destination that survives a failing disk. pino.destination (SonicBoom)
// re-throws a write error as an uncaught exception, and its flush at exit retries every error
// but EAGAIN in a blocking loop: a full disk turned a pull into a process spinning in
// flushSync for ever, deaf to SIGTERM and holding the workspace lock. Here
// a failed write stops the logging, is told once (onFailure), and nothing is retried.
//
// Lines are appended in batches: one append in flight, the lines that come meanwhile joined
// into the next. No descriptor stays open, so the many runs of one test process leak none;
// what is still queued when the process exits is appended synchronously, once, errors ignored.

import { appendFile, appendFileSync, mkdirSync } from 'node:fs'
import path from 'node:path'

/** Open log files with lines still queued, flushed by the one exit handler. */
const open = new Set<LogFile>()
let exitHandlerInstalled = false

export class LogFile {
  private queued: string[] = []
  private writing = false
  /** The error that stopped the logging, if one did. */
  failure: NodeJS.ErrnoException | undefined

  constructor(
    readonly file: string,
    private readonly onFailure: (error: NodeJS.ErrnoException) => void = () => {},
  ) {
    mkdirSync(path.dirname(file), { recursive: true })
    if (!exitHandlerInstalled) {
      exitHandlerInstalled = true
      process.on('exit', () => {
        for (const log of open) log.flushSync()
      })
    }
  }

  /** pino's destination interface: one serialised line. */
  write(line: string): boolean {
    if (this.failure) return true
    this.queued.push(line)
    open.add(this)
    if (!this.writing) this.next()
    return true
  }

  private next(): void {
    if (this.queued.length === 0) {
      open.delete(this)
      return
    }
    const text = this.queued.join('')
    this.queued = []
    this.writing = true
    appendFile(this.file, text, (error) => {
      this.writing = false
      if (error) this.fail(error)
      else this.next()
    })
  }

  private fail(error: NodeJS.ErrnoException): void {
    if (this.failure) return
    this.failure = error
    this.queued = []
    open.delete(this)
    this.onFailure(error)
  }

  /** Appends what is queued now, in one synchronous call; a failure is kept, never retried. */
  flushSync(): void {
    if (this.failure || this.queued.length === 0) return
    const text = this.queued.join('')
    this.queued = []
    open.delete(this)
    try {
      appendFileSync(this.file, text)
    } catch (error) {
      this.fail(error as NodeJS.ErrnoException)
    }
  }

  /** pino's logger.flush(cb): calls back once every line written so far is in the file (or logging failed). */
  flush(done: (error?: Error) => void = () => {}): void {
    if ((!this.writing && this.queued.length === 0) || this.failure) {
      done(this.failure)
      return
    }
    setTimeout(() => this.flush(done), 5)
  }
}
