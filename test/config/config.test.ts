import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  CONFIG_FILE,
  ConfigError,
  findWorkspaceRoot,
  loadConfig,
  parseConfig,
  writeNewConfig,
} from '../../src/config/config.js'

const base = 'server: http://127.0.0.1:8080\nproject: demo\nenvironment: live\n'

function refusal(text: string): string {
  try {
    parseConfig(text)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).exitCode).toBe(2)
    return (error as Error).message
  }
  throw new Error('expected a refusal')
}

describe('loading cms-sync.yaml', () => {
  test('fills every default of design.md', () => {
    expect(parseConfig(base)).toEqual({
      server: 'http://127.0.0.1:8080',
      project: 'demo',
      environment: 'live',
      resources: ['schemas', 'content', 'media', 'forms', 'connections'],
      rateLimit: { requestsPerSecond: 10, concurrency: 4 },
      watch: {
        debounceMs: 100,
        pollSeconds: 10,
        publishQuietMs: 5000,
        massChange: { files: 50, percent: 20 },
        massDelete: { files: 20, percent: 10 },
        verifyMedia: { requestsPerHour: 60, megabytesPerHour: 200 },
      },
      safety: { maxDeletePercent: 50, maxDeletes: 20 },
      dialect: 'auto',
      publishing: 'auto',
      tls: { insecure: false },
      limits: { listingMB: 128, mediaMB: 1024 },
      retention: { trashDays: 30, logsDays: 14 },
      ui: { enabled: true, port: 0 },
    })
  })

  test('a partly given section keeps the defaults of its other keys', () => {
    expect(parseConfig(`${base}rateLimit: { requestsPerSecond: 2 }\n`).rateLimit).toEqual({
      requestsPerSecond: 2,
      concurrency: 4,
    })
  })

  test.each([
    [
      'rateLimit: { requestsPerSecond: ten }',
      'cms-sync.yaml: rateLimit.requestsPerSecond: expected a number from 1 to 1000, got "ten" (string)',
    ],
    [
      'rateLimit: { concurrency: 0 }',
      'cms-sync.yaml: rateLimit.concurrency: expected a whole number from 1 to 64, got 0 (number)',
    ],
    [
      'dialect: graphql',
      'cms-sync.yaml: dialect: expected one of auto, spec, upstream, got "graphql" (string)',
    ],
    [
      'resources: [content, pages]',
      'cms-sync.yaml: resources[1]: expected one of schemas, content, media, forms, connections, got "pages" (string)',
    ],
    [
      'watch: 5',
      'cms-sync.yaml: watch: expected a mapping with debounceMs, pollSeconds, publishQuietMs, massChange, massDelete and verifyMedia, got 5 (number)',
    ],
    ['publishing: never', 'cms-sync.yaml: publishing: expected one of auto, manual, got "never" (string)'],
    [
      'watch: { publishQuietMs: -1 }',
      'cms-sync.yaml: watch.publishQuietMs: expected a whole number of milliseconds from 0 to 3600000, got -1 (number)',
    ],
    [
      'watch: { verifyMedia: { requestsPerHour: -1 } }',
      'cms-sync.yaml: watch.verifyMedia.requestsPerHour: expected a whole number of requests from 0 (off) to 3600, got -1 (number)',
    ],
    [
      'watch: { verifyMedia: { megabytesPerHour: "lots" } }',
      'cms-sync.yaml: watch.verifyMedia.megabytesPerHour: expected a whole number of megabytes from 1 to 1000000, got "lots" (string)',
    ],
    [
      'watch: { verifyMedia: { perDay: 3 } }',
      'cms-sync.yaml: watch.verifyMedia.perDay: unknown key (expected one of requestsPerHour, megabytesPerHour)',
    ],
    [
      'watch: { massDelete: { files: 0 } }',
      'cms-sync.yaml: watch.massDelete.files: expected a whole number of files from 1 to 1000000, got 0 (number)',
    ],
    ['tls: { insecure: "yes" }', 'cms-sync.yaml: tls.insecure: expected true or false, got "yes" (string)'],
    [
      'rateLimit: { burst: 3 }',
      'cms-sync.yaml: rateLimit.burst: unknown key (expected one of requestsPerSecond, concurrency)',
    ],
    [
      'limits: { listingMB: 0.5 }',
      'cms-sync.yaml: limits.listingMB: expected a whole number of megabytes from 1 to 4096, got 0.5 (number)',
    ],
    ['servr: x', 'cms-sync.yaml: servr: unknown key'],
  ])('refuses %s', (line, message) => {
    expect(refusal(`${base}${line}\n`)).toContain(message)
  })

  test('names missing keys and refuses credentials in the URL', () => {
    expect(refusal('project: demo\nenvironment: live\n')).toContain(
      'cms-sync.yaml: server: expected an http:// or https:// URL without user, password, query or fragment, got nothing (the key is missing)',
    )
    expect(refusal('server: https://u:p@h\nproject: demo\nenvironment: live\n')).toContain(
      'cms-sync.yaml: server:',
    )
  })

  test('an empty file and a YAML syntax error are refused with the file name', () => {
    expect(refusal('')).toMatch(/^cms-sync.yaml: \(top level\): expected a mapping/)
    expect(refusal('server: [unclosed\n')).toMatch(/^cms-sync.yaml: /)
  })

  test('a missing file says to run init', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-cfg-'))
    await expect(loadConfig(dir)).rejects.toThrow(/not found; run `cms-sync init`/)
  })
})

describe('finding and writing the workspace', () => {
  test('findWorkspaceRoot walks up to the nearest cms-sync.yaml', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-ws-'))
    await writeFile(path.join(root, CONFIG_FILE), base)
    await mkdir(path.join(root, 'content', 'deep'), { recursive: true })
    expect(await findWorkspaceRoot(path.join(root, 'content', 'deep'))).toBe(root)
    const outside = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-none-'))
    expect(await findWorkspaceRoot(outside)).toBeUndefined()
  })

  test('writeNewConfig writes a commented file that loads back', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-ws-'))
    await writeNewConfig(root, {
      server: 'https://cms.example.com/',
      project: 'p',
      environment: 'e',
      dialect: 'upstream',
    })
    const text = await readFile(path.join(root, CONFIG_FILE), 'utf8')
    expect(text).toContain('# cms-sync workspace settings')
    expect(await loadConfig(root)).toMatchObject({
      server: 'https://cms.example.com/',
      project: 'p',
      dialect: 'upstream',
    })
  })

  test('rewriting an existing file keeps its comments', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-ws-'))
    await writeFile(
      path.join(root, CONFIG_FILE),
      `# my notes\n${base}rateLimit: { requestsPerSecond: 3 } # slow server\n`,
    )
    await writeNewConfig(root, { server: 'http://other:1', project: 'demo', environment: 'staging' })
    const text = await readFile(path.join(root, CONFIG_FILE), 'utf8')
    expect(text).toContain('# my notes')
    expect(text).toContain('# slow server')
    expect(await loadConfig(root)).toMatchObject({
      server: 'http://other:1',
      environment: 'staging',
      rateLimit: { requestsPerSecond: 3 },
    })
  })

  test('invalid values are refused before anything is written', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-ws-'))
    await expect(writeNewConfig(root, { server: 'ftp://x', project: 'p', environment: 'e' })).rejects.toThrow(
      /cms-sync.yaml: server: expected an http/,
    )
    await expect(readFile(path.join(root, CONFIG_FILE))).rejects.toThrow()
  })
})

test("the generated cms-sync.yaml's comments say what the code does", async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-comments-'))
  await writeNewConfig(root, { server: 'http://127.0.0.1:8080', project: 'demo', environment: 'live' })
  const text = await readFile(path.join(root, CONFIG_FILE), 'utf8')
  // A lone save of a flat kind folder's file goes after debounceMs of quiet (the activity signal
  // vouches for it); media, trees and git operations wait the watcher's delivery gap at least
  // (src/watch/local-changes.ts). The comment once said every edit waited the gap.
  const source = await readFile(path.join(import.meta.dirname, '../../src/watch/local-changes.ts'), 'utf8')
  const gap = /const SOURCE_DELIVERY_GAP_MS = ([\d_]+)/.exec(source)?.[1]?.replaceAll('_', '')
  expect(gap).toBeDefined()
  expect(source).toMatch(/signalVouches\(now\)\s*\?\s*options\.debounceMs/)
  const comment = text.replace(/\n# /g, ' ')
  expect(comment).toContain(
    'a saved file of schemas/, content/, forms/ or connections/ is pushed once it has been quiet for debounceMs',
  )
  expect(comment).toContain(`media, a subfolder's file or a git operation wait ${gap} ms at least`)
  // The media re-read budget the template names is the one the schema fills in.
  const { watch } = parseConfig(text)
  expect(text).toContain(
    `watch.verifyMedia: { requestsPerHour: ${watch.verifyMedia.requestsPerHour}, megabytesPerHour: ${watch.verifyMedia.megabytesPerHour} }`,
  )
})
