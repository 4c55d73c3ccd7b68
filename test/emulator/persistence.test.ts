// --data: state survives a restart, a torn journal line is ignored, and many writes stay cheap.

import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { startEmulator } from '../../src/emulator/index.js'
import { Store } from '../../src/emulator/store.js'
import { call, client, login, tempDir } from './helpers.js'

describe('persistence with a data folder', () => {
  it('keeps content, media bytes, users, settings and persistent tokens across a restart', async () => {
    const dataDir = tempDir()
    const first = await startEmulator({ dataDir })
    const token = (
      await call(first, 'POST', '/api/user/login?persist=true', {
        body: { username: 'admin', password: 'admin' },
      })
    ).text
    const api = client(first, token)
    await api.post('P/content/home?create=true', {
      id: 'home',
      schemaId: 'page',
      properties: { title: 'Home' },
    })
    await api.post('P/media/logo', { filename: 'logo.txt', base64: Buffer.from('bytes!').toString('base64') })
    await api.post('P/media/old', { filename: 'old.txt', base64: Buffer.from('old').toString('base64') })
    await api.del('P/media/old')
    await api.post('/api/users/new', { username: 'ed', password: 'pw' })
    await api.post('/api/demo/settings/languages', ['en', 'de'])
    await api.put('/api/server/projects/demo/staging')
    const before = (await api.get('P/content/home')).json()
    await first.close()

    const second = await startEmulator({ dataDir })
    try {
      const again = client(second, token)
      expect((await again.get('P/content/home')).json()).toEqual(before)
      expect(await (await fetch(`${second.url}/media/demo/live/logo`)).text()).toBe('bytes!')
      expect((await again.get('P/media')).json().map((m: { id: string }) => m.id)).toEqual(['logo'])
      expect((await again.get('/api/demo/settings/languages')).json()).toEqual(['en', 'de'])
      expect((await again.get('/api/demo/environments')).json()).toEqual(['live', 'staging'])
      expect(await login(second, 'ed', 'pw')).toMatch(/^[0-9a-f]{40}$/)
      // Only the referenced blob is left on disk.
      expect(fs.readdirSync(path.join(dataDir, 'blobs'))).toHaveLength(1)
      // The data folder never holds a token or a password in clear.
      const files = ['snapshot.json', 'journal.jsonl']
        .map((f) => fs.readFileSync(path.join(dataDir, f), 'utf8'))
        .join('')
      expect(files).not.toContain(token)
      expect(files).not.toContain('"pw"')
    } finally {
      await second.close()
    }
  })

  it('ignores a torn last journal line and keeps working', async () => {
    const dataDir = tempDir()
    const first = await startEmulator({ dataDir })
    const api = client(first, first.token())
    await api.post('P/forms/a?create=true', { id: 'a', title: 'A' })
    await api.post('P/forms/b?create=true', { id: 'b', title: 'B' })
    await first.close()
    fs.appendFileSync(
      path.join(dataDir, 'journal.jsonl'),
      '{"s":9999,"o":{"t":"put","c":"x","k":"y","v":{"half',
    )

    // What a crash during a snapshot write leaves: a half temp file next to the intact snapshot.
    fs.writeFileSync(path.join(dataDir, 'snapshot.json.abc123.tmp'), '{"seq":1,"coll')
    const second = await startEmulator({ dataDir })
    const again = client(second, second.token())
    expect((await again.get('P/forms')).json().map((f: { id: string }) => f.id)).toEqual(['a', 'b'])
    expect(fs.readdirSync(dataDir).filter((f) => f.endsWith('.tmp'))).toEqual([])
    await again.post('P/forms/c?create=true', { id: 'c', title: 'C' })
    await second.close()
    const third = await startEmulator({ dataDir })
    try {
      expect((await client(third, third.token()).get('P/forms')).json()).toHaveLength(3)
    } finally {
      await third.close()
    }
  })

  it('takes 10,000 writes as journal appends and reads them back', () => {
    const dataDir = tempDir()
    const store = Store.open(dataDir)
    const started = Date.now()
    for (let i = 0; i < 10_000; i++) store.put('bulk', `k${i}`, { i, text: 'x'.repeat(200) })
    const elapsed = Date.now() - started
    store.close()
    expect(elapsed).toBeLessThan(5000)
    const reopened = Store.open(dataDir)
    expect(reopened.keys('bulk')).toHaveLength(10_000)
    expect(reopened.get('bulk', 'k9999')).toMatchObject({ i: 9999 })
    reopened.close()
  })
})

describe('compaction', () => {
  it('folds a grown journal into the snapshot while writing, keeping every record and only live blobs', () => {
    const dataDir = tempDir()
    const store = Store.open(dataDir, 20_000)
    const blobs: string[] = []
    for (let i = 0; i < 300; i++) {
      const blob = store.writeBlob(Buffer.from(`bytes ${i}`))
      store.put('demo\u0000live\u0000media', `m${i % 10}`, { id: `m${i % 10}`, blob })
      if (blobs[i % 10]) store.releaseBlob(blobs[i % 10]!)
      blobs[i % 10] = blob
      store.put('bulk', `k${i}`, { i, text: 'y'.repeat(100) })
    }
    expect(fs.statSync(path.join(dataDir, 'journal.jsonl')).size).toBeLessThan(20_000 + 1000)
    store.close()
    const reopened = Store.open(dataDir)
    expect(reopened.keys('bulk')).toHaveLength(300)
    const media = reopened.list<{ blob: string }>('demo\u0000live\u0000media')
    expect(media).toHaveLength(10)
    expect(media.map((m) => reopened.readBlob(m.blob)?.toString()).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `bytes ${290 + i}`).sort(),
    )
    expect(fs.readdirSync(path.join(dataDir, 'blobs')).sort()).toEqual(media.map((m) => m.blob).sort())
    reopened.close()
  })
})

describe('data folder lock', () => {
  it('refuses a second emulator on the same folder while the first runs, and frees it on close or failed start', async () => {
    const dataDir = tempDir()
    const first = await startEmulator({ dataDir })
    await expect(startEmulator({ dataDir })).rejects.toThrow(/in use/)
    await first.close()
    const again = await startEmulator({ dataDir })
    await again.close()
    const fresh = tempDir()
    await expect(
      startEmulator({ dataDir: fresh, seedDir: path.join(fresh, 'no-such-workspace') }),
    ).rejects.toThrow(/not a folder/)
    const afterFailure = await startEmulator({ dataDir: fresh })
    await afterFailure.close()
  })
})
