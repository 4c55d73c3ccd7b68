// The log file on a full disk: /dev/full answers every write with ENOSPC, as a full file system
// does, and needs no root (a tmpfs would). A write error stops the logging and is told once;
// nothing retries it, and a process whose log cannot be written still ends (pino's own
// destination spun for ever in flushSync at exit, deaf to SIGTERM: issue 14 item 14).

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { LogFile } from '../../src/log/log-file.js'

const haveDevFull = process.platform === 'linux' && existsSync('/dev/full')

test.skipIf(!haveDevFull)(
  'a log file on a full disk stops logging, says so once, and retries nothing',
  async () => {
    const failures: string[] = []
    const log = new LogFile('/dev/full', (error) => failures.push(error.code ?? ''))
    for (let i = 0; i < 50; i++) log.write(`{"line":${i}}\n`)
    const error = await new Promise<Error | undefined>((resolve) => log.flush(resolve))
    expect((error as NodeJS.ErrnoException | undefined)?.code).toBe('ENOSPC')
    expect(failures).toEqual(['ENOSPC'])
    // Later lines are dropped at once; the synchronous flush at exit returns.
    expect(log.write('{"after":true}\n')).toBe(true)
    log.flushSync()
    expect(failures).toEqual(['ENOSPC'])
  },
)

test.skipIf(!haveDevFull)(
  'a process whose log file is on a full disk still ends, told once',
  async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-full-log-'))
    const logger = path.resolve('src/log/logger.ts')
    // The log file becomes /dev/full once the logger is made (making it moves an old log aside).
    const script = `
    const { rmSync, symlinkSync } = await import('node:fs')
    const { createLogger, logFilePath } = await import(${JSON.stringify(logger)})
    const root = ${JSON.stringify(root)}
    const log = createLogger({ root, onFileError: (e) => process.stderr.write('log failed: ' + e.code + '\\n') })
    rmSync(logFilePath(root), { force: true })
    symlinkSync('/dev/full', logFilePath(root))
    for (let i = 0; i < 200; i++) log.info({ i }, 'a line of a pull')
    setTimeout(() => { log.info('last'); process.exit(0) }, 300)
  `
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (c) => {
      stderr += String(c)
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('close', (c, s) => resolve([c, s])),
    )
    clearTimeout(timer)
    expect(signal, `the process hung: ${stderr}`).toBeNull()
    expect(code, stderr).toBe(0)
    expect(stderr.match(/log failed: ENOSPC/g)).toHaveLength(1)
  },
  30_000,
)
