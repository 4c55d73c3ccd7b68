import { mkdtemp, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { createLogger, logFilePath } from '../../src/log/logger.js'

test('secrets never reach the log file, wherever they sit in the logged object', async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-log-'))
  const logger = createLogger({ root, level: 'debug' })
  logger.info(
    {
      token: 'S1',
      password: 'S2',
      connection: { deployer: { password: 'S3', token: 'S4' }, secret: 'S5' },
      headers: { authorization: 'Bearer S6', cookie: 'token=S7', 'set-cookie': ['token=S8'] },
      req: { headers: { cookie: 'S9' } },
      kept: 'visible',
    },
    'request',
  )
  await new Promise<void>((resolve) => logger.flush(() => resolve()))
  await new Promise((resolve) => setTimeout(resolve, 50))
  const text = await readFile(logFilePath(root), 'utf8')
  expect(text).toContain('visible')
  for (let i = 1; i <= 9; i++) expect(text).not.toContain(`S${i}`)
  expect(JSON.parse(text.trim().split('\n')[0]!)).toMatchObject({ token: '[redacted]', msg: 'request' })
})
