// A media file replaced in the CMS under the same name: the upstream server lists media without
// dates or sizes and its downloads carry no validator, so only the bytes tell. status never
// calls such bytes "clean" without reading them: it says how many were not compared and since
// when; `status --checksum` compares them; watch re-reads them on a paced schedule
// (watch.verifyMedia) and pulls a replacement. On the spec dialect updateDate vouches for them.

import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { createMediaApi } from '../../src/remote/media.js'
import { type Dialect, startWorld, type World } from '../helpers/sync-world.js'
import { watchInProcess } from '../helpers/watch.js'

let world: World | undefined
const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  await world?.close()
  world = undefined
})

async function synced(dialect: Dialect): Promise<{ w: World; id: string }> {
  const w = await startWorld(dialect, { resources: ['content', 'media'], content: [] })
  world = w
  await mkdir(w.file('media'), { recursive: true })
  await writeFile(w.file('media/photo.png'), 'base-bytes')
  await writeFile(w.file('media/logo.png'), 'logo-bytes')
  expect((await w.cli('sync')).exitCode).toBe(0)
  const { parse } = await import('yaml')
  const index = parse(await readFile(w.file('media.yaml'), 'utf8')) as Record<string, string>
  return { w, id: index['photo.png']! }
}

/** Someone replaces the bytes in the CMS under the same name (the listing stays as it was). */
async function replaceInUi(w: World, id: string, bytes: string): Promise<void> {
  await createMediaApi(w.server).upload(
    { path: await tempFile(w, bytes), size: bytes.length, name: 'photo.png', sha256: '' },
    id,
  )
}

async function tempFile(w: World, bytes: string): Promise<string> {
  const file = path.join(w.root, '..', `upload-${Date.now()}`)
  await writeFile(file, bytes)
  return file
}

describe('upstream: bytes the listing cannot vouch for', () => {
  test('status says how many media are unverified and since when, never "clean"; --checksum compares them', async () => {
    const { w, id } = await synced('upstream')
    await replaceInUi(w, id, 'replaced-in-the-ui')

    const status = await w.cli('status')
    expect(status.exitCode).toBe(0)
    expect(status.stdout).not.toMatch(/clean|agree/)
    expect(status.stdout).toMatch(
      /unverified +2 media items: the server's bytes were not compared \(last compared \d{4}-\d\d-\d\dT[\d:.]+Z at the oldest\).*cms-sync status --checksum/,
    )
    const json = await w.cli('--json', 'status')
    expect(json.json.changes).toEqual([])
    expect(json.json.unverified.map((u: { path: string }) => u.path).sort()).toEqual([
      'media/logo.png',
      'media/photo.png',
    ])
    for (const u of json.json.unverified) expect(Date.parse(u.verifiedAt)).toBeGreaterThan(0)

    // doctor says it too, from the records alone.
    const doctor = await w.cli('--json', 'doctor')
    expect(doctor.json.checks.find((c: { name: string }) => c.name === 'media bytes')).toMatchObject({
      detail: expect.stringMatching(
        /^2 media items the server lists without dates: .*the oldest last compared \d{4}-/,
      ),
    })
    const checked = await w.cli('--json', 'status', '--checksum')
    expect(checked.json.changes).toMatchObject([
      { path: 'media/photo.png', local: 'unchanged', remote: 'modified', action: 'pull' },
    ])
    expect(checked.json.unverified).toBeUndefined()

    // A run that reads them records when: the next plain status says so.
    const before = json.json.unverified.find((u: { path: string }) => u.path === 'media/logo.png').verifiedAt
    expect((await w.cli('pull', '--checksum')).exitCode).toBe(0)
    expect(await readFile(w.file('media/photo.png'), 'utf8')).toBe('replaced-in-the-ui')
    const after = await w.cli('--json', 'status')
    const logo = after.json.unverified.find((u: { path: string }) => u.path === 'media/logo.png')
    expect(Date.parse(logo.verifiedAt)).toBeGreaterThan(Date.parse(before))
  })

  test('watch re-reads media within its budget and pulls a replacement', async () => {
    const { w, id } = await synced('upstream')
    const config = await readFile(w.file('cms-sync.yaml'), 'utf8')
    await writeFile(
      w.file('cms-sync.yaml'),
      `${config}watch: { debounceMs: 50, pollSeconds: 1, verifyMedia: { requestsPerHour: 3600, megabytesPerHour: 1 } }\n`,
    )
    const d = watchInProcess(w.root, w.env)
    cleanups.push(() => d.stop())
    await d.waitForEvent({ event: 'reconciled' })
    await replaceInUi(w, id, 'replaced-in-the-ui')
    await d.waitForEvent({ event: 'verified', path: 'media/photo.png', same: false }, 10_000)
    await d.waitForEvent({ event: 'pulled', path: 'media/photo.png' }, 10_000)
    expect(await readFile(w.file('media/photo.png'), 'utf8')).toBe('replaced-in-the-ui')
    // Every request went through the one rate-limited client: the verifier's reads are downloads.
    expect(w.proxy.seen.some((line) => line.startsWith(`GET /media/demo/live/${id}`))).toBe(true)
  })
})

test('spec: updateDate vouches for the bytes, so nothing is unverified and a replacement is a pull', async () => {
  const { w, id } = await synced('spec')
  await replaceInUi(w, id, 'replaced-in-the-ui')
  const json = await w.cli('--json', 'status')
  expect(json.json.unverified).toBeUndefined()
  expect(json.json.changes).toMatchObject([{ path: 'media/photo.png', action: 'pull' }])
  expect((await w.cli('pull')).exitCode).toBe(0)
  const status = await w.cli('status')
  expect(status.stdout).toMatch(/^clean: the workspace and the server agree/m)
})
