// The local page in a real browser (Debian's chromium, driven by playwright-core), against a
// real `cms-sync watch` on a real emulator: what a user sees and clicks. Each test waits for
// the daemon's own events or for the page's DOM to show what was pushed to it, never for a timer.

import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { createMediaApi } from '../../src/remote/media.js'
import { ARTIFACTS, HAVE_BROWSER, launchBrowser, REBOUND_HOST } from '../helpers/browser.js'
import { startWorld, syncedWorld, type World } from '../helpers/sync-world.js'
import { serverTitle, setWatchConfig, watchInProcess } from '../helpers/watch.js'
import { uiInProcess } from './ui-process.js'

const MARKUP = '<img src=x onerror="window.__pwned=1">'

let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined
const cleanups: Array<() => Promise<unknown>> = []

beforeAll(async () => {
  if (HAVE_BROWSER) browser = await launchBrowser()
}, 30_000)
afterAll(async () => {
  await browser?.close()
})
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

/** `watch` in process with its page; the page's address from its own event. */
async function watchWithPage(w: World, watch: string) {
  await writeWatch(w.root, watch)
  const daemon = watchInProcess(w.root, w.env)
  cleanups.push(() => daemon.stop())
  const { url } = await daemon.waitForEvent({ event: 'page' })
  await daemon.waitForEvent({ event: 'reconciled' }, 15_000)
  return { daemon, url: url as string }
}

async function writeWatch(root: string, watch: string): Promise<void> {
  await setWatchConfig(root)
  const file = path.join(root, 'cms-sync.yaml')
  const text = (await readFile(file, 'utf8')).replace(/^watch:.*\n/m, '')
  await writeFile(file, `${text}watch: ${watch}\n`)
}

/** A raw request with any Host and Origin (a browser sets them itself; fetch will not let us). */
function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: opts.method ?? 'GET',
        headers: opts.headers ?? {},
      },
      (res) => {
        let body = ''
        res.on('data', (c) => {
          body += String(c)
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      },
    )
    req.on('error', reject)
    req.end(opts.body)
  })
}

const PNG = {
  base: 'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFElEQVR4nGM4QSJgGNUwqmH4agAA+NpYH65gHiQAAAAASUVORK5CYII=',
  local:
    'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR4nGPgyr5GEmIY1TCqYfhqAAAstksQvlHImAAAAABJRU5ErkJggg==',
  remote:
    'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR4nGNoCrhPEmIY1TCqYfhqAADU2rEQrwQnQQAAAABJRU5ErkJggg==',
}

/** An upstream workspace synced with two media files (photo.png, logo.png) and no content. */
async function upstreamWithTwoMedia(): Promise<World> {
  const w = await startWorld('upstream', { resources: ['content', 'media'], content: [] })
  cleanups.push(() => w.close())
  await mkdir(w.file('media'), { recursive: true })
  await writeFile(w.file('media/photo.png'), 'photo-bytes')
  await writeFile(w.file('media/logo.png'), 'logo-bytes')
  expect((await w.cli('sync')).exitCode).toBe(0)
  return w
}

async function open(url: string): Promise<Page> {
  const page = await browser!.context.newPage()
  cleanups.push(() => page.close())
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  cleanups.push(async () => expect(errors).toEqual([]))
  await page.goto(url)
  await page.waitForSelector('body[data-ready="true"]')
  return page
}

async function localJson(w: World, rel: string) {
  return JSON.parse(await readFile(w.file(rel), 'utf8'))
}

describe.skipIf(!HAVE_BROWSER)('the local page in a browser', () => {
  test('shows a conflict leaf by leaf; keeping the server for one leaf changes the file and the server as resolve does; markup in a title is text', async () => {
    const w = await syncedWorld('spec')
    cleanups.push(() => w.close())
    // Given an item both sides changed at two leaves, the local title carrying markup
    await w.editJson('content/home.json', { properties: { title: MARKUP }, sort: 2 })
    await w.setContent('home', { properties: { title: 'Remote home' }, sort: 3 })
    const { daemon, url } = await watchWithPage(w, '{ debounceMs: 50, pollSeconds: 1 }')
    await daemon.waitForEvent({ event: 'conflict', path: 'content/home.json' })

    // Then the page lists it with base, local and server values per leaf
    const page = await open(url)
    const card = page.locator('article.conflict[data-path="content/home.json"]')
    await card.waitFor()
    const sortRow = card.locator('tr[data-leaf="/sort"]')
    await expect.poll(() => sortRow.locator('pre').allTextContents()).toEqual(['1', '2', '3'])
    const titleRow = card.locator('tr[data-leaf="/properties/title"]')
    await expect
      .poll(() => titleRow.locator('pre').allTextContents())
      .toEqual(['"home"', JSON.stringify(MARKUP), '"Remote home"'])
    await expect
      .poll(() => sortRow.locator('.changed').allTextContents())
      .toEqual(['changed locally', 'changed on the server'])
    // The markup is characters on the page, never an element, and its script never ran
    expect(await page.locator('#conflicts img').count()).toBe(0)
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined()
    await page.screenshot({ path: path.join(ARTIFACTS, 'conflict.png'), fullPage: true })

    // When the user keeps the server's value of one leaf
    await sortRow.locator('button[data-keep="remote"]').click()
    await page.locator('#result:not([data-state="busy"])', { hasText: 'keep server' }).waitFor()
    expect(await page.locator('#result').getAttribute('data-state')).toBe('done')

    // Then the file and the server hold it, and the other leaf is still a conflict on both sides
    expect(await localJson(w, 'content/home.json')).toMatchObject({ sort: 3, properties: { title: MARKUP } })
    expect(await w.server.get('content', 'home')).toMatchObject({
      sort: 3,
      properties: { title: 'Remote home' },
    })
    await card.locator('tr[data-leaf="/sort"]').waitFor({ state: 'detached' })
    expect(await card.locator('tr[data-leaf="/properties/title"]').count()).toBe(1)
  })

  test('held deletions (a paused mass delete) are listed with their paths and pushed from the page', async () => {
    const w = await syncedWorld('spec')
    cleanups.push(() => w.close())
    // Given a watch that pauses past 2 deletions at once, and 3 files deleted together
    const { daemon, url } = await watchWithPage(
      w,
      '{ debounceMs: 50, pollSeconds: 1, massDelete: { files: 2, percent: 0 } }',
    )
    const page = await open(url)
    const gone = ['content/contact.json', 'content/news.json', 'content/shop.json']
    await Promise.all(gone.map((rel) => rm(w.file(rel))))
    await daemon.waitForEvent({ event: 'paused' })

    // Then the page lists exactly the held deletions (the pause holds them first; the delete
    // guard, 3 of 5, holds them too), and nothing went to the server
    const held = page.locator('article.held').first()
    await expect
      .poll(() => held.locator('li').allTextContents(), { timeout: 10_000 })
      .toEqual(gone.map((rel) => `${rel} (content, delete-remote)`))
    expect(await held.locator('h3').textContent()).toContain('paused')
    expect(await page.locator('#daemon').textContent()).toContain('paused')
    for (const id of ['contact', 'news', 'shop']) expect(await w.server.get('content', id)).toBeDefined()
    await page.screenshot({ path: path.join(ARTIFACTS, 'held.png'), fullPage: true })

    // When the user pushes them
    await held.locator('button[data-held="release"]').click()
    await page.locator('#result[data-state="done"]').waitFor()

    // Then the daemon deletes them on the server, lifts the pause, and the page says so
    for (const rel of gone) await daemon.waitForEvent({ event: 'pushed', path: rel, action: 'delete-remote' })
    for (const id of ['contact', 'news', 'shop']) expect(await w.server.get('content', id)).toBeUndefined()
    await page.locator('#held .empty').waitFor()
    await page.locator('#daemon.state-watching').waitFor()
    expect(await w.exists('.cms-sync/watch-paused.json')).toBe(false)
  })

  test('the activity feed shows a push as it happens', async () => {
    const w = await syncedWorld('spec')
    cleanups.push(() => w.close())
    const { daemon, url } = await watchWithPage(w, '{ debounceMs: 50, pollSeconds: 1 }')
    const page = await open(url)
    // When a file is edited
    await w.editJson('content/news.json', { properties: { title: 'Fresh news' } })
    await daemon.waitForEvent({ event: 'pushed', path: 'content/news.json' })
    // Then the open page shows it in the feed (pushed to it: the page never asks again)
    const entry = page.locator('#feed li[data-event="pushed"][data-path="content/news.json"]')
    await entry.waitFor()
    expect(await entry.locator('.what').textContent()).toBe('pushed')
    expect(await entry.locator('time').textContent()).toMatch(/^\d\d:\d\d:\d\d$/)
    await page.screenshot({ path: path.join(ARTIFACTS, 'feed.png'), fullPage: true })
    // and at a phone's width the same page still reads in one column
    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: path.join(ARTIFACTS, 'phone.png'), fullPage: true })
    expect(
      await page.evaluate(
        () =>
          (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
            .documentElement.scrollWidth,
      ),
    ).toBeLessThanOrEqual(390)
  })

  test('a foreign Host (DNS rebinding) and a foreign Origin (another site posting) are refused', async () => {
    const w = await syncedWorld('spec')
    cleanups.push(() => w.close())
    await w.editJson('content/home.json', { properties: { title: 'Local home' } })
    await w.setContent('home', { properties: { title: 'Remote home' } })
    const { daemon, url } = await watchWithPage(w, '{ debounceMs: 50, pollSeconds: 1 }')
    await daemon.waitForEvent({ event: 'conflict', path: 'content/home.json' })
    const port = new URL(url).port

    // A name that resolves to 127.0.0.1 (a rebinding attack's second step): refused, nothing shown
    const rebound = await browser!.context.newPage()
    cleanups.push(() => rebound.close())
    const answer = await rebound.goto(url.replace('127.0.0.1', REBOUND_HOST))
    expect(answer?.status()).toBe(421)
    expect(await rebound.locator('#conflicts').count()).toBe(0)

    // Another site open in the same browser posts to the page's action (it even knows the secret)
    const evil = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' })
      res.end('<!doctype html><title>evil</title>')
    })
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', () => resolve()))
    cleanups.push(
      () =>
        new Promise((resolve) => {
          evil.closeAllConnections()
          evil.close(resolve)
        }),
    )
    const site = await browser!.context.newPage()
    cleanups.push(() => site.close())
    await site.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`)
    const tried = await site.evaluate(async (target) => {
      const body = JSON.stringify({ keep: 'remote', paths: ['content/home.json'] })
      // A "simple" request needs no preflight: the browser sends it, with this site's Origin.
      const simple = await fetch(`${target}api/resolve`, {
        method: 'POST',
        mode: 'no-cors',
        body,
        headers: { 'Content-Type': 'text/plain' },
      }).then(
        (r) => `simple: ${r.type}`,
        (e) => `simple: ${e}`,
      )
      // A JSON request needs a preflight the page's server never allows (no CORS at all).
      const json = await fetch(`${target}api/resolve`, {
        method: 'POST',
        body,
        headers: { 'Content-Type': 'application/json' },
      }).then(
        () => 'json: answered',
        () => 'json: blocked',
      )
      return [simple, json]
    }, url)
    // The simple one reaches the server and is refused (its answer is not even readable there:
    // Cross-Origin-Resource-Policy); the JSON one never leaves the browser.
    expect(tried).toEqual(['simple: TypeError: Failed to fetch', 'json: blocked'])
    expect(await w.readJson('content/home.json')).toMatchObject({ properties: { title: 'Local home' } })

    // The same refusals at the HTTP level, with the status codes a script would see
    const body = JSON.stringify({ keep: 'remote', paths: ['content/home.json'] })
    const json = { 'Content-Type': 'application/json' }
    const fromElsewhere = await rawRequest(`${url}api/resolve`, {
      method: 'POST',
      headers: { ...json, Host: `127.0.0.1:${port}`, Origin: 'http://evil.example' },
      body,
    })
    expect(fromElsewhere.status).toBe(403)
    const noOrigin = await rawRequest(`${url}api/resolve`, {
      method: 'POST',
      headers: { ...json, Host: `127.0.0.1:${port}` },
      body,
    })
    expect(noOrigin.status).toBe(403)
    const foreignHost = await rawRequest(url, { headers: { Host: `attacker.example:${port}` } })
    expect(foreignHost.status).toBe(421)
    const noSecret = await rawRequest(`http://127.0.0.1:${port}/`, { headers: { Host: `127.0.0.1:${port}` } })
    expect(noSecret.status).toBe(404)
    const preflight = await rawRequest(`${url}api/resolve`, {
      method: 'OPTIONS',
      headers: {
        Host: `127.0.0.1:${port}`,
        Origin: 'http://evil.example',
        'Access-Control-Request-Method': 'POST',
      },
    })
    expect(preflight.status).toBe(405)
    expect(Object.keys(preflight.headers).filter((h) => h.startsWith('access-control-'))).toEqual([])
    expect(await w.readJson('content/home.json')).toMatchObject({ properties: { title: 'Local home' } })

    // The page itself carries a policy that allows no inline script and nothing from elsewhere
    const own = await rawRequest(url, { headers: { Host: `127.0.0.1:${port}` } })
    expect(own.headers['content-security-policy']).toContain("script-src 'self'")
    expect(own.headers['content-security-policy']).toContain("default-src 'none'")
    expect(own.headers['access-control-allow-origin']).toBeUndefined()
  })

  test('a media conflict shows both images; an SVG is offered as a file, never shown', async () => {
    const w = await startWorld('spec', { resources: ['schemas', 'content', 'media'], content: [] })
    cleanups.push(() => w.close())
    const api = createMediaApi(w.server)
    const upload = async (name: string, bytes: Buffer, id?: string) => {
      const file = path.join(w.root, '..', `upload-${name}-${Math.random()}`)
      await writeFile(file, bytes)
      return (await api.upload({ path: file, size: bytes.length, name }, id)).id
    }
    const svg = (text: string) =>
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=1"><text>${text}</text></svg>`,
      )
    // Given a PNG and an SVG changed on both sides
    const pic = await upload('pic.png', Buffer.from(PNG.base, 'base64'))
    const logo = await upload('logo.svg', svg('base'))
    expect((await w.cli('--json', 'sync')).exitCode).toBe(0)
    await writeFile(w.file('media/pic.png'), Buffer.from(PNG.local, 'base64'))
    await upload('pic.png', Buffer.from(PNG.remote, 'base64'), pic)
    await writeFile(w.file('media/logo.svg'), svg('local'))
    await upload('logo.svg', svg('remote'), logo)
    const { daemon, url } = await watchWithPage(w, '{ debounceMs: 50, pollSeconds: 1 }')
    await daemon.waitForEvent({ event: 'conflict', path: 'media/pic.png' })
    await daemon.waitForEvent({ event: 'conflict', path: 'media/logo.svg' })

    // Then both sides of the PNG are shown as images, each with its own bytes
    const page = await open(url)
    const images = page.locator('article.conflict[data-path="media/pic.png"] img')
    await expect.poll(() => images.count()).toBe(2)
    await expect
      .poll(() =>
        images.evaluateAll((list) =>
          list.map((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
        ),
      )
      .toEqual([16, 16])
    const sources = await images.evaluateAll((list) =>
      list.map((img) => (img as unknown as { src: string }).src),
    )
    const [local, remote] = await Promise.all(
      sources.map((src) => fetch(src).then(async (r) => Buffer.from(await r.arrayBuffer()))),
    )
    expect(local!.toString('base64')).toBe(PNG.local)
    expect(remote!.toString('base64')).toBe(PNG.remote)
    await page.screenshot({ path: path.join(ARTIFACTS, 'media.png'), fullPage: true })

    // and the SVG is no image: two downloads, served as bytes to save, its script never run
    const svgCard = page.locator('article.conflict[data-path="media/logo.svg"]')
    expect(await svgCard.locator('img').count()).toBe(0)
    const links = await svgCard
      .locator('a[download]')
      .evaluateAll((list) => list.map((a) => (a as unknown as { href: string }).href))
    expect(links).toHaveLength(2)
    const served = await fetch(links[0]!)
    expect(served.headers.get('content-type')).toBe('application/octet-stream')
    expect(served.headers.get('content-disposition')).toMatch(/^attachment/)
    expect(served.headers.get('content-security-policy')).toContain('sandbox')
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined()
  })

  test('`cms-sync ui` serves the page without the daemon; a group is settled at once, under the workspace lock', async () => {
    const w = await syncedWorld('spec')
    cleanups.push(() => w.close())
    // Given two conflicts in content/ and no daemon
    for (const id of ['home', 'news']) {
      await w.editJson(`content/${id}.json`, { properties: { title: `Local ${id}` } })
      await w.setContent(id, { properties: { title: `Remote ${id}` } })
    }
    const url = await uiInProcess(w, (stop) => cleanups.push(stop))
    const page = await open(url)
    await expect.poll(() => page.locator('article.conflict').count()).toBe(2)
    expect(await page.locator('#daemon').textContent()).toContain('not-watching')
    // Nothing syncs by itself, and the page holds no lock while idle: a command runs meanwhile
    expect((await w.cli('--json', 'status')).json.changes).toHaveLength(2)

    // When the user keeps the server for every content conflict (from the keyboard)
    await page.locator('.group[data-group="content"] button[data-keep="remote"]').focus()
    await page.keyboard.press('Enter')
    await page.locator('#result[data-state="done"]').waitFor()

    // Then both files hold the server's version, the server is unchanged, and the page is clean
    expect(await localJson(w, 'content/home.json')).toMatchObject({ properties: { title: 'Remote home' } })
    expect(await localJson(w, 'content/news.json')).toMatchObject({ properties: { title: 'Remote news' } })
    expect(await serverTitle(w.server, 'home')).toBe('Remote home')
    await page.locator('#conflicts .empty').waitFor()
    expect((await w.cli('--json', 'status')).json.changes).toEqual([])
  })

  test('the page never says the workspace and the server agree about media bytes it did not compare', async () => {
    // Given an upstream workspace with media: the server lists media without dates, so their
    // bytes are compared only when read, and `status` says so instead of "clean"
    const w = await upstreamWithTwoMedia()
    expect((await w.cli('status')).stdout).toContain(
      'nothing to sync in what was compared, but the bytes of 2 media items were not compared',
    )

    // Then the page, read from the same status model, says the same, never "agree"
    const page = await open(await uiInProcess(w, (stop) => cleanups.push(stop)))
    const counts = page.locator('#counts')
    await expect.poll(() => counts.textContent()).toContain('2 media items were not compared')
    expect(await counts.textContent()).not.toContain('agree')
    expect(await counts.textContent()).toContain('cms-sync status --checksum')
  })

  test('deletions on the server a guard holds: the card says why once, the feed says what is held', async () => {
    const w = await syncedWorld('spec')
    cleanups.push(() => w.close())
    const { daemon, url } = await watchWithPage(w, '{ debounceMs: 50, pollSeconds: 1 }')
    const page = await open(url)
    // When another client deletes 3 of the 5 content items (more than safety.maxDeletePercent)
    for (const id of ['contact', 'news', 'shop']) await w.server.remove('content', id)
    await daemon.waitForEvent({ event: 'held' }, 15_000)

    // Then the card names the held deletions, its reason once (not the same sentence twice)
    const held = page.locator('article.held').first()
    await expect.poll(() => held.locator('li').count(), { timeout: 10_000 }).toBe(3)
    const heading = await held.locator('h3').textContent()
    expect(heading).toContain('deleted on the server')
    expect(await held.locator('.card-head .meta').textContent()).not.toContain(heading!)
    // and the feed's line says what is held, not the bare word
    const line = page.locator('#feed li[data-event="held"] .path').first()
    await expect.poll(() => line.textContent()).toContain('content/contact.json')
    expect(await line.textContent()).toMatch(/^3 content items deleted on the server/)
    await page.screenshot({ path: path.join(ARTIFACTS, 'held-remote.png'), fullPage: true })
  })

  test('the feed names media replaced on the server; bytes found unchanged do not drown it', async () => {
    // Given an upstream workspace with two media files, watched with a fast re-read budget
    const w = await upstreamWithTwoMedia()
    const { parse } = await import('yaml')
    const id = (parse(await readFile(w.file('media.yaml'), 'utf8')) as Record<string, string>)['photo.png']!
    const { daemon, url } = await watchWithPage(
      w,
      '{ debounceMs: 50, pollSeconds: 1, verifyMedia: { requestsPerHour: 3600, megabytesPerHour: 1 } }',
    )
    const page = await open(url)
    // When the logo is re-read unchanged, and the photo is replaced in the CMS under its name
    await daemon.waitForEvent({ event: 'verified', path: 'media/logo.png', same: true }, 10_000)
    const upload = path.join(w.root, '..', 'upload-photo')
    await writeFile(upload, 'replaced-in-the-ui')
    await createMediaApi(w.server).upload({ path: upload, size: 18, name: 'photo.png', sha256: '' }, id)
    await daemon.waitForEvent({ event: 'verified', path: 'media/photo.png', same: false }, 10_000)
    await daemon.waitForEvent({ event: 'pulled', path: 'media/photo.png' }, 10_000)

    // Then the feed says the photo was replaced on the server (not "verified"), then pulled,
    // and has no line for bytes found as they were (one a minute would drown the rest)
    const replaced = page.locator('#feed li[data-event="verified"][data-path="media/photo.png"]')
    await replaced.waitFor()
    expect(await replaced.locator('.what').textContent()).toBe('replaced on the server')
    await page.locator('#feed li[data-event="pulled"][data-path="media/photo.png"]').waitFor()
    expect(await page.locator('#feed li[data-event="verified"][data-path="media/logo.png"]').count()).toBe(0)
  })

  test('the daemon line says when the next poll is due from the start, not only after the first poll', async () => {
    const w = await syncedWorld('spec')
    cleanups.push(() => w.close())
    const { url } = await watchWithPage(w, '{ debounceMs: 50, pollSeconds: 60 }')
    const page = await open(url)
    // The start-up reconcile is a full run: the next poll is due a poll interval after it
    await expect.poll(() => page.locator('#daemon').textContent()).toMatch(/next poll about \d\d:\d\d:\d\d/)
  })

  test("the feed's line for a push reverted on the server names the leaves, ours and the server's", async () => {
    const w = await syncedWorld('spec')
    cleanups.push(() => w.close())
    const { daemon, url } = await watchWithPage(w, '{ debounceMs: 50, pollSeconds: 1 }')
    const page = await open(url)
    // An editor loads news, the developer pushes a title, the editor saves the copy loaded before
    const stale = await w.server.get('content', 'news')
    await w.editJson('content/news.json', { properties: { title: 'Developer news' } })
    await daemon.waitForEvent({ event: 'pushed', path: 'content/news.json' })
    await w.server.put('content', 'news', stale!)
    await daemon.waitForEvent({ event: 'reverted', path: 'content/news.json' })
    const line = page.locator('#feed li[data-event="reverted"][data-path="content/news.json"]')
    await line.waitFor()
    expect(await line.locator('.what').textContent()).toBe('reverted on the server')
    expect(await line.locator('.path').textContent()).toContain('/properties/title (ours "Developer news"')
    expect(await line.locator('.path').textContent()).toContain('cms-sync push --again content/news.json')
  })
})
