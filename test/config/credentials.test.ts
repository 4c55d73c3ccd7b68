import { chmod, mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { credentialsPath, resolveToken, saveToken } from '../../src/config/credentials.js'

async function home() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-home-'))
  return { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'xdg') } as NodeJS.ProcessEnv
}

test('the file lives under XDG_CONFIG_HOME, else ~/.config', async () => {
  expect(credentialsPath({ XDG_CONFIG_HOME: '/x', HOME: '/h' })).toBe('/x/cms-sync/credentials.yaml')
  expect(credentialsPath({ HOME: '/h' })).toBe('/h/.config/cms-sync/credentials.yaml')
})

test('tokens are saved per server with mode 0600 and read back', async () => {
  const env = await home()
  await saveToken(env, 'http://127.0.0.1:8080/', 'aaa')
  await saveToken(env, 'https://cms.example.com', 'bbb')
  expect((await stat(credentialsPath(env))).mode & 0o777).toBe(0o600)
  expect(await resolveToken(env, 'http://127.0.0.1:8080')).toBe('aaa')
  expect(await resolveToken(env, 'https://cms.example.com/')).toBe('bbb')
  expect(await resolveToken(env, 'http://elsewhere')).toBeUndefined()
  await saveToken(env, 'http://127.0.0.1:8080', 'ccc')
  expect(await resolveToken(env, 'http://127.0.0.1:8080')).toBe('ccc')
  expect(await resolveToken(env, 'https://cms.example.com')).toBe('bbb')
})

test('an existing file with a wider mode is narrowed to 0600', async () => {
  const env = await home()
  const file = credentialsPath(env)
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, 'servers: {}\n')
  await chmod(file, 0o644)
  await saveToken(env, 'http://h', 't')
  expect((await stat(file)).mode & 0o777).toBe(0o600)
  expect(await readFile(file, 'utf8')).toContain('token: "t"')
})

test('CMS_SYNC_TOKEN wins over the file', async () => {
  const env = await home()
  await saveToken(env, 'http://h', 'from-file')
  expect(await resolveToken({ ...env, CMS_SYNC_TOKEN: 'from-env' }, 'http://h')).toBe('from-env')
})
