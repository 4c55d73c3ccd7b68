// The form and connection codecs, the secret references and the entries export, without a server.

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { fileBytes } from '../../src/workspace/codec.js'
import { createConnectionCodec } from '../../src/workspace/connection-codec.js'
import {
  defaultReferenceName,
  isSecretKey,
  secretFields,
  urlCarriesCredentials,
} from '../../src/workspace/connection-secrets.js'
import { entriesText } from '../../src/workspace/entries-export.js'
import { formCodec } from '../../src/workspace/form-codec.js'
import { parseFileText } from '../../src/workspace/local-file.js'

const ref = (name: string) => `$\{${name}}`

const remote = {
  id: 'site',
  title: 'Site',
  url: '',
  processor: { alias: 'json', name: 'JsonProcessor', fileExtension: '.json' },
  deployer: {
    alias: 'api',
    title: 'API',
    url: 'https://x',
    token: 'tok-123',
    paths: { media: '', content: '' },
  },
  isLocked: false,
  sync: { isRemote: false, hasRemote: false },
  viewedBy: '',
}

describe('connection secrets', () => {
  test.each([
    ['password', true],
    ['gitPassword', true],
    ['token', true],
    ['apiKey', true],
    ['private_key', true],
    ['key', true],
    ['monkey', false],
    ['alias', false],
    ['fileExtension', false],
    ['username', false],
  ])('%s is a secret key: %s', (key, secret) => expect(isSecretKey(key)).toBe(secret))

  test.each([
    ['https://user:pw@git.test/r.git', true],
    ['https://ghp_token@github.com/o/r.git', true],
    ['https://hooks.test/x?sig=abc', true],
    ['git@github.com:o/r.git', true],
    ['https://git.test/r.git', false],
    ['https://www.example.test/', false],
    ['deploy@example.test', false],
    ['main', false],
  ])('%s carries a credential: %s', (value, secret) => expect(urlCarriesCredentials(value)).toBe(secret))

  test('every deployer setting not known to be harmless is a secret, whatever its key; harmless ones stay', () => {
    const fields = secretFields({
      id: 'c',
      title: 'T',
      url: 'https://site.test',
      processor: { name: 'JsonProcessor', alias: 'json', fileExtension: '.json', extra: 'p-secret' },
      deployer: {
        title: 'Git',
        alias: 'git',
        paths: { media: 'media', content: 'content' },
        username: 'deploy',
        branch: 'main',
        rootPath: '/srv',
        repo: 'https://git.test/r.git',
        auth: 'a-secret',
        headers: { Authorization: 'Bearer h' },
        list: ['first', { value: 'second' }],
        empty: '',
        retries: 3,
      },
    })
    expect(fields.map((f) => f.path)).toEqual([
      'processor.extra',
      'deployer.auth',
      'deployer.headers.Authorization',
      'deployer.list.0',
      'deployer.list.1.value',
    ])
  })

  test('the default reference name is deterministic and a valid variable name', () => {
    expect(defaultReferenceName('my site.ü', 'deployer.password')).toBe(
      'CMS_SYNC_SECRET_MY_SITE___DEPLOYER_PASSWORD',
    )
  })

  test('toFile masks every secret and the revision ignores the secret value', () => {
    const codec = createConnectionCodec({ env: {} })
    const file = codec.toFile(remote)
    expect(file.deployer).toMatchObject({
      token: ref('CMS_SYNC_SECRET_SITE_DEPLOYER_TOKEN'),
      url: 'https://x',
    })
    expect(fileBytes(file).text).not.toContain('tok-123')
    const changed = { ...remote, deployer: { ...remote.deployer, token: 'other' } }
    expect(codec.revisionOf(changed)).toBe(codec.revisionOf(remote))
  })

  test("the file's own reference names are kept", async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'cms-sync-conn-'))
    await mkdir(path.join(root, 'connections'))
    await writeFile(
      path.join(root, 'connections', 'site.json'),
      JSON.stringify({ id: 'site', deployer: { token: ref('API_TOKEN') } }),
    )
    const codec = createConnectionCodec({
      root,
      env: { API_TOKEN: 'tok-123', CMS_SYNC_SECRETS: 'API_TOKEN' },
    })
    expect(codec.toFile(remote).deployer).toMatchObject({ token: ref('API_TOKEN') })
    expect(codec.remoteProblems?.(remote)).toEqual([])
    const drifted = createConnectionCodec({
      root,
      env: { API_TOKEN: 'stale', CMS_SYNC_SECRETS: 'API_TOKEN' },
    })
    expect(drifted.remoteProblems?.(remote)[0]).toContain(
      'deployer.token: the server holds a different secret',
    )
  })

  test('only declared variables are read: CMS_SYNC_SECRET_*, or listed in CMS_SYNC_SECRETS; never the token', () => {
    const runner = { CMS_SYNC_TOKEN: 'the-token', HOME_KEY: 'cloud-key', CMS_SYNC_SECRET_PW: 'pw' }
    const file = { id: 'site', deployer: { password: ref('HOME_KEY'), token: ref('CMS_SYNC_TOKEN') } }
    const codec = createConnectionCodec({ env: runner })
    const problems = codec.checkReferences(file, {})
    expect(problems).toEqual([
      `deployer.password refers to $\{HOME_KEY}, which is not declared as a connection secret (references read only CMS_SYNC_SECRET_* variables and those CMS_SYNC_SECRETS lists): rename the reference and its variable to $\{CMS_SYNC_SECRET_HOME_KEY}, or declare it where the variable is set: CMS_SYNC_SECRETS=HOME_KEY`,
      `deployer.token refers to $\{CMS_SYNC_TOKEN}, cms-sync's own token, which is never a connection secret; write the connection's own secret as a $\{CMS_SYNC_SECRET_…} reference`,
    ])
    expect(() => codec.toBody(file, { current: undefined, now: '' })).toThrow(
      /connections\/site\.json: .*nothing was sent/,
    )
    // Listing the token declares nothing; listing another name does.
    const listed = createConnectionCodec({ env: { ...runner, CMS_SYNC_SECRETS: 'HOME_KEY, CMS_SYNC_TOKEN' } })
    expect(listed.checkReferences(file, {})).toHaveLength(1)
    const body = listed.toBody(
      { id: 'site', deployer: { password: ref('HOME_KEY'), other: ref('CMS_SYNC_SECRET_PW') } },
      { current: undefined, now: '' },
    )
    expect(body.deployer).toEqual({ password: 'cloud-key', other: 'pw' })
  })

  test('toBody resolves references; an unset variable is a clear error', () => {
    const file = createConnectionCodec({ env: {} }).toFile(remote)
    const ok = createConnectionCodec({ env: { CMS_SYNC_SECRET_SITE_DEPLOYER_TOKEN: 'v' } })
    expect(ok.toBody(file, { current: undefined, now: '' }).deployer).toMatchObject({ token: 'v' })
    expect(() => createConnectionCodec({ env: {} }).toBody(file, { current: undefined, now: '' })).toThrow(
      /connections\/site\.json: deployer\.token refers to \$\{CMS_SYNC_SECRET_SITE_DEPLOYER_TOKEN\}, which is not set/,
    )
  })

  test('a literal secret in a file is refused', () => {
    const parsed = parseFileText(createConnectionCodec({ env: {} }), JSON.stringify(remote), 'site')
    expect(parsed.ok).toBe(false)
    expect(parsed.ok ? [] : parsed.problems.join()).toContain('deployer.token: a secret must be a')
  })
})

describe('form codec', () => {
  test('entries never reach the file, and a file holding entries is refused', () => {
    const form = { id: 'f', title: 'F', inputs: {}, entries: [{ a: 1 }], isLocked: false }
    expect(formCodec.toFile(form)).toEqual({ id: 'f', title: 'F', inputs: {} })
    const parsed = parseFileText(formCodec, JSON.stringify(form), 'f')
    expect(parsed.ok ? '' : parsed.problems.join()).toContain('entries: not part of a form file')
  })
})

describe('entries export', () => {
  const entries = [
    { name: 'Ann', message: 'a "quote", a comma\nand a line', time: 't1' },
    { name: 'Bo', extra: 'x', time: 't2' },
  ]
  test('CSV is RFC 4180: quoted only when needed, quotes doubled, CRLF, inputs first then extras, time last', () => {
    expect(entriesText('csv', ['name', 'message'], entries)).toBe(
      'name,message,extra,time\r\nAnn,"a ""quote"", a comma\nand a line",,t1\r\nBo,,x,t2\r\n',
    )
  })
  test('JSON is the entries as the server holds them', () => {
    expect(JSON.parse(entriesText('json', [], entries))).toEqual(entries)
  })
})
