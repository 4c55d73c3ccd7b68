// A team's day on the real server: a form collects entries that no push may lose, both sides
// edit the same node (a conflict, settled by resolve), a colleague clones the git repository and
// syncs without re-creating anything, a schema still in use is not deleted, and an expired
// token writes nothing at all. The server is checked for damage after every step.

import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contentFile, SECTION_SCHEMA } from '../helpers/fixtures.js'
import {
  cleanupTemps,
  expectOnly,
  freshProject,
  initWorkspace,
  runCli,
  SETUP,
  type ServerState,
  serverState,
  type Upstream,
  Workspace,
  writeSectionPages,
} from './harness.js'

const FORM = {
  id: 'contact',
  title: 'Contact',
  allowedOrigin: '',
  redirect: '',
  appendRedirect: false,
  inputs: { name: { type: 'text', required: true }, message: { type: 'text' } },
}

/**
 * Content ids of this file. The server looks schedule tasks up by content id alone, across
 * projects and environments, so a common id ("news") would show another project's dates.
 */
function page(id: string, title: string) {
  return contentFile(id, { properties: { title } })
}

describe.skipIf(!SETUP)('a team workflow (real upstream server)', () => {
  let up: Upstream
  let ws: Workspace
  let state: ServerState

  beforeAll(async () => {
    up = await freshProject('workflow')
    ws = await initWorkspace(up, 'workflow')
    await writeSectionPages(ws, { 'wf-home': 'wf-home', 'wf-news': 'wf-news', 'wf-shop': 'wf-shop' })
    await ws.writeJson('forms/contact.json', FORM)
    await ws.ok('sync')
    state = await serverState(up.api)
  })
  afterAll(cleanupTemps)

  it('form entries submitted on the site are exported, and a form edit keeps them', async () => {
    // A visitor's submission (no redirect: the server stores it, then answers 404).
    const submit = await fetch(`${up.api.base}/forms/contact/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada', message: 'Hello' }),
    })
    expect(submit.status).toBe(404)
    const exported = await ws.ok('entries', 'contact', '--format', 'json')
    expect(JSON.parse(exported.stdout)).toEqual([expect.objectContaining({ name: 'Ada', message: 'Hello' })])
    state = await serverState(up.api)
    // The entries never reach the workspace, and the listing's change in them is no edit.
    expect(await ws.readJson('forms/contact.json')).not.toHaveProperty('entries')
    await ws.expectClean()
    await ws.writeJson('forms/contact.json', { ...FORM, title: 'Contact us' })
    await ws.ok('push')
    state = await expectOnly(up.api, state, { changed: ['forms/contact'] })
    expect(state.forms.get('contact')).toMatchObject({
      title: 'Contact us',
      entries: [expect.objectContaining({ name: 'Ada', message: 'Hello' })],
    })
  })

  it('an edit on both sides is a conflict: neither is overwritten until resolve says which wins', async () => {
    const news = await up.api.get('content', 'wf-news')
    await up.api.put('content', { ...news, properties: { title: 'News (server)' } })
    await ws.writeJson('content/wf-news.json', page('wf-news', 'News (local)'))
    state = await serverState(up.api)
    const status = await ws.cli('--json', 'status')
    expect((status.json as { changes: unknown[] }).changes).toEqual([
      expect.objectContaining({ path: 'content/wf-news.json', action: 'conflict' }),
    ])
    const sync = await ws.cli('--json', 'sync')
    expect(sync.code).toBe(3)
    state = await expectOnly(up.api, state)
    expect((await ws.readJson('content/wf-news.json')).properties).toEqual({ title: 'News (local)' })
    await ws.ok('resolve', 'content/wf-news.json', '--keep', 'local')
    state = await expectOnly(up.api, state, { changed: ['content/wf-news'] })
    expect(state.content.get('wf-news')).toMatchObject({
      properties: { title: 'News (local)' },
      createdBy: up.userId,
      createDate: news.createDate,
    })
    await ws.expectClean()
  })

  it('a fresh git clone syncs without re-creating or changing anything', async () => {
    ws.git('init', '-q')
    ws.git('add', '-A')
    ws.git('commit', '-qm', 'site')
    const clone = path.join(path.dirname(ws.root), 'clone')
    ws.git('clone', '-q', ws.root, clone)
    const colleague = new Workspace(clone, ws.env)
    const sync = await colleague.ok('--json', 'sync')
    expect(sync.json).toEqual({ applied: [], conflicts: [], failed: [] })
    state = await expectOnly(up.api, state)
    await colleague.expectClean()
    // The clone's first edit goes up like any other.
    await colleague.writeJson('content/wf-shop.json', page('wf-shop', 'Shop (from the clone)'))
    await colleague.ok('push')
    state = await expectOnly(up.api, state, { changed: ['content/wf-shop'] })
    await ws.ok('pull')
    expect((await ws.readJson('content/wf-shop.json')).properties).toEqual({ title: 'Shop (from the clone)' })
  })

  it('a schema that content still uses is not deleted (issue 13 item 6)', async () => {
    const { rm } = await import('node:fs/promises')
    await rm(path.join(ws.root, 'schemas/section.json'))
    const push = await ws.cli('--json', 'push', '--allow-deletes')
    expect(push.code).toBe(1)
    expect((push.json as { failed: unknown[] }).failed).toEqual([
      expect.objectContaining({
        path: 'schemas/section.json',
        error: expect.stringMatching(
          /still used by content\/wf-home\.json, content\/wf-news\.json, content\/wf-shop\.json/,
        ),
      }),
    ])
    state = await expectOnly(up.api, state)
    await ws.writeJson('schemas/section.json', SECTION_SCHEMA)
    await ws.expectClean()
  })

  it('a token the server refuses writes nothing, and status says so (issue 13 item 7)', async () => {
    await ws.writeJson('schemas/section.json', { ...SECTION_SCHEMA, name: 'Section (edited)' })
    await ws.writeJson('content/wf-home.json', page('wf-home', 'Home (edited)'))
    const expired = { ...ws.env, CMS_SYNC_TOKEN: '0'.repeat(40) }
    const status = await runCli(['-C', ws.root, 'status'], expired)
    expect(status.code).toBe(2)
    expect(status.stderr).toMatch(/token .* is not valid .*cms-sync login/)
    const push = await runCli(['-C', ws.root, 'push'], expired)
    expect(push.code).toBe(2)
    expect(push.stderr).toMatch(/nothing was sent to the server/)
    // The schema would have been taken without a token: it was not sent.
    state = await expectOnly(up.api, state)
    await ws.ok('push')
    state = await expectOnly(up.api, state, { changed: ['schemas/section', 'content/wf-home'] })
  })
})
