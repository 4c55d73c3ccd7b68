// A real browser for the local page's tests: Debian's chromium driven by playwright-core (no
// browser download). Without /usr/bin/chromium the browser tests are skipped and say why, so the
// README's test command works on a fresh machine; CI installs chromium (.ci/run) and sets
// CMS_SYNC_REQUIRE_BROWSER=1, which turns the skip into a failure.

import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'

export const CHROMIUM = process.env.CMS_SYNC_CHROMIUM ?? '/usr/bin/chromium'
export const HAVE_BROWSER = existsSync(CHROMIUM)

if (!HAVE_BROWSER) {
  const why = `browser tests: ${CHROMIUM} is missing (apt-get install chromium, or set CMS_SYNC_CHROMIUM)`
  if (process.env.CMS_SYNC_REQUIRE_BROWSER === '1') throw new Error(why)
  process.stderr.write(`${why}; they are skipped\n`)
}

/** Screenshots of the page's main views, kept as test artifacts (gitignored). */
export const ARTIFACTS = path.resolve('test-artifacts', 'page')

/** A name that resolves to loopback only inside this browser: a DNS rebinding as the browser sees it. */
export const REBOUND_HOST = 'rebound.example'

/** A fresh profile each time (playwright passes it as --user-data-dir). */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(path.join(tmpdir(), 'cms-sync-chromium-'))
  await mkdir(ARTIFACTS, { recursive: true })
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--host-resolver-rules=MAP ${REBOUND_HOST} 127.0.0.1`,
    ],
  })
  return {
    context,
    close: async () => {
      await context.close()
      await rm(profile, { recursive: true, force: true })
    },
  }
}
