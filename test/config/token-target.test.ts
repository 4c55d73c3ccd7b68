// Where CMS_SYNC_TOKEN may go (src/config/token-target.ts): the environment names the target,
// cms-sync.yaml must agree, and in CI a token without a named target goes nowhere.

import { describe, expect, test } from 'vitest'
import {
  inCi,
  refuseCommittedInsecureTls,
  refuseLoginTarget,
  refuseUnnamedTarget,
  requireNamedTarget,
} from '../../src/config/token-target.js'

const SERVER = 'https://cms.example.com'

describe('the target the environment names', () => {
  test('CI is any value but empty, 0 or false', () => {
    for (const value of ['true', '1', 'yes', 'TRUE']) expect(inCi({ CI: value })).toBe(true)
    for (const value of [undefined, '', '0', 'false', ' False ']) expect(inCi({ CI: value })).toBe(false)
  })

  test('a service that does not set CI is known by its own variable; CI, when set, has the last word', () => {
    for (const marker of [
      'JENKINS_URL',
      'TF_BUILD',
      'CODEBUILD_BUILD_ID',
      'TEAMCITY_VERSION',
      'GITHUB_ACTIONS',
    ])
      expect(inCi({ [marker]: 'x' }), marker).toBe(true)
    expect(inCi({ JENKINS_URL: 'http://jenkins.invalid/', CI: 'false' })).toBe(false)
    expect(inCi({ JENKINS_URL: '' })).toBe(false)
  })

  test('the same server in another spelling agrees; another host, port, path or a userinfo trick does not', () => {
    const env = { CMS_SYNC_SERVER: SERVER }
    for (const same of [SERVER, `${SERVER}/`, 'HTTPS://CMS.EXAMPLE.COM', 'https://cms.example.com:443'])
      expect(() => refuseUnnamedTarget(env, { server: same })).not.toThrow()
    for (const other of [
      'https://cms.example.com.evil.test',
      'https://cms.example.com@evil.test',
      'https://cms.example.com:8443',
      'https://cms.example.com/other',
      'http://cms.example.com',
    ])
      expect(() => refuseUnnamedTarget(env, { server: other }), other).toThrow(/CMS_SYNC_SERVER names/)
  })

  test('project and environment must agree when named; unnamed fields are not checked', () => {
    const env = { CMS_SYNC_PROJECT: 'site', CMS_SYNC_ENVIRONMENT: 'live' }
    expect(() =>
      refuseUnnamedTarget(env, { server: SERVER, project: 'site', environment: 'live' }),
    ).not.toThrow()
    expect(() => refuseUnnamedTarget(env, { server: SERVER, project: 'other' })).toThrow(
      /CMS_SYNC_PROJECT names/,
    )
    expect(() => refuseUnnamedTarget(env, { server: SERVER, environment: 'staging' })).toThrow(
      /CMS_SYNC_ENVIRONMENT names/,
    )
    expect(() => refuseUnnamedTarget({}, { server: SERVER, project: 'any' })).not.toThrow()
  })

  test('in CI a token from the environment needs the target named; outside CI, or without a token, it does not', () => {
    const token = { CMS_SYNC_TOKEN: 't' }
    expect(() => requireNamedTarget({ ...token, CI: 'true' }, ['server'])).toThrow(/CMS_SYNC_SERVER is not/)
    expect(() =>
      requireNamedTarget({ ...token, CI: 'true', CMS_SYNC_SERVER: SERVER }, [
        'server',
        'project',
        'environment',
      ]),
    ).toThrow(/CMS_SYNC_PROJECT, CMS_SYNC_ENVIRONMENT are not/)
    expect(() => requireNamedTarget(token, ['server'])).not.toThrow()
    expect(() => requireNamedTarget({ CI: 'true' }, ['server'])).not.toThrow()
  })

  test('a login in CI goes to a server the environment or --server names', () => {
    expect(() => refuseLoginTarget({ CI: 'true' }, SERVER, false)).toThrow(/set CMS_SYNC_SERVER/)
    expect(() => refuseLoginTarget({ CI: 'true' }, SERVER, true)).not.toThrow()
    expect(() => refuseLoginTarget({ CI: 'true', CMS_SYNC_SERVER: SERVER }, SERVER, false)).not.toThrow()
    expect(() => refuseLoginTarget({}, SERVER, false)).not.toThrow()
  })

  test('tls.insecure holds in CI only with CMS_SYNC_TLS_INSECURE=true', () => {
    expect(() => refuseCommittedInsecureTls({ CI: 'true' }, true)).toThrow(/CMS_SYNC_TLS_INSECURE=true/)
    expect(() =>
      refuseCommittedInsecureTls({ CI: 'true', CMS_SYNC_TLS_INSECURE: 'true' }, true),
    ).not.toThrow()
    expect(() => refuseCommittedInsecureTls({ CI: 'true' }, false)).not.toThrow()
    expect(() => refuseCommittedInsecureTls({}, true)).not.toThrow()
  })
})
