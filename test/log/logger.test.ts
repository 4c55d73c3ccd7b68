import { mkdtemp, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { itemLogger } from '../../src/log/item-lines.js'
import { createLogger, logFilePath } from '../../src/log/logger.js'
import { waitFor } from '../watch/helpers.js'

/** The log file once it holds `last`: it is opened and written asynchronously, even after a flush. */
async function logOnceItHas(root: string, last: string): Promise<string> {
  let text = ''
  await waitFor(
    async () => {
      text = await readFile(logFilePath(root), 'utf8').catch(() => '')
      return text.includes(last)
    },
    { what: `"${last}" in the log file` },
  )
  return text
}

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
  const text = await logOnceItHas(root, '"msg":"request"')
  expect(text).toContain('visible')
  for (let i = 1; i <= 9; i++) expect(text).not.toContain(`S${i}`)
  expect(JSON.parse(text.trim().split('\n')[0]!)).toMatchObject({ token: '[redacted]', msg: 'request' })
})

test('per-item lines go to the same log, their secret keys redacted', async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-log-'))
  const logger = createLogger({ root })
  const items = itemLogger(logger)
  expect(itemLogger(logger)).toBe(items) // one child per logger: each compiles its redaction
  items.info({ path: 'content/home.json', action: 'pull' }, 'applied')
  items.error(
    { path: 'content/a.json', action: 'push', error: 'refused', token: 'S1', apiKey: 'S2' },
    'item failed',
  )
  await new Promise<void>((resolve) => logger.flush(() => resolve()))
  const lines = (await logOnceItHas(root, '"msg":"item failed"'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
  expect(lines).toMatchObject([
    { msg: 'applied', path: 'content/home.json', action: 'pull' },
    {
      msg: 'item failed',
      path: 'content/a.json',
      error: 'refused',
      token: '[redacted]',
      apiKey: '[redacted]',
    },
  ])
})
