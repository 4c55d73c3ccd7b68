// Media on the real server: files in folders uploaded once (no duplicates, even on a project's
// first upload, issue 13 item 1), renames and moves sent as renames and moves of the same id,
// changed bytes replacing the bytes of the same id (item 5), a rename made on the server
// pulled as a move of the local file, and deletes; the server is checked after every step.

import { readFile, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseMediaIndex } from '../../src/workspace/media-index.js'
import {
  cleanupTemps,
  expectOnly,
  freshProject,
  initWorkspace,
  REPO_EXAMPLE,
  SETUP,
  type ServerState,
  serverState,
  type Upstream,
  type Workspace,
} from './harness.js'

const FILES = {
  'images/hero.png': 'media/images/hero.png',
  'images/team/anna.png': 'media/images/team/anna.png',
  'documents/press kit.pdf': 'media/documents/press kit.pdf',
  'logo.svg': 'media/logo.svg',
}

describe.skipIf(!SETUP)('media in folders (real upstream server)', () => {
  let up: Upstream
  let ws: Workspace
  let state: ServerState
  let ids: Record<string, string>

  beforeAll(async () => {
    up = await freshProject('media')
    ws = await initWorkspace(up, 'media')
    await ws.ok('pull')
    state = await serverState(up.api)
  })
  afterAll(cleanupTemps)

  async function mediaIds(): Promise<Record<string, string>> {
    // Parsed, not matched: an id YAML would read as a number (51294e82…) is written quoted
    return Object.fromEntries(parseMediaIndex(await readFile(path.join(ws.root, 'media.yaml'), 'utf8')))
  }

  it('a first push uploads each file once, into its folder, with its bytes', async () => {
    for (const [rel, source] of Object.entries(FILES))
      await ws.write(`media/${rel}`, await readFile(path.join(REPO_EXAMPLE, source)))
    await ws.ok('push')
    ids = await mediaIds()
    expect(Object.keys(ids).sort()).toEqual(Object.keys(FILES).sort())
    state = await expectOnly(up.api, state, { added: Object.values(ids).map((id) => `media/${id}`) })
    const hero = state.media.get(ids['images/hero.png']!)!
    expect(hero).toMatchObject({ folder: '/images/', name: 'hero.png' })
    expect(state.media.get(ids['documents/press kit.pdf']!)).toMatchObject({ folder: '/documents/' })
    expect(await up.api.mediaBytes(hero.id)).toEqual(
      await readFile(path.join(REPO_EXAMPLE, FILES['images/hero.png'])),
    )
    await ws.expectClean()
  })

  it('a rename and a move locally are a rename and a move of the same id on the server', async () => {
    await rename(path.join(ws.root, 'media/logo.svg'), path.join(ws.root, 'media/brand.svg'))
    await rename(
      path.join(ws.root, 'media/images/team/anna.png'),
      path.join(ws.root, 'media/images/anna.png'),
    )
    await ws.ok('push')
    state = await expectOnly(up.api, state, {
      changed: [`media/${ids['logo.svg']}`, `media/${ids['images/team/anna.png']}`],
    })
    expect(state.media.get(ids['logo.svg']!)).toMatchObject({ name: 'brand.svg', folder: '/' })
    expect(state.media.get(ids['images/team/anna.png']!)).toMatchObject({
      name: 'anna.png',
      folder: '/images/',
    })
    await ws.expectClean()
  })

  it('changed bytes replace the bytes of the same id (issue 13 item 5)', async () => {
    const hero = ids['images/hero.png']!
    const bytes = Buffer.concat([await ws.read('media/images/hero.png'), Buffer.from('changed')])
    await ws.write('media/images/hero.png', bytes)
    await ws.ok('push')
    state = await expectOnly(up.api, state, { changed: [`media/${hero}`] })
    expect(await up.api.mediaBytes(hero)).toEqual(bytes)
    await ws.expectClean()
  })

  it('a rename on the server moves the local file; a local delete deletes on the server', async () => {
    const pdf = ids['documents/press kit.pdf']!
    await up.api.ok('POST', `media/rename/${pdf}?name=${encodeURIComponent('kit-2025.pdf')}`)
    state = await serverState(up.api)
    await ws.ok('pull')
    expect(await ws.read('media/documents/kit-2025.pdf')).toEqual(
      await readFile(path.join(REPO_EXAMPLE, FILES['documents/press kit.pdf'])),
    )
    await expect(ws.read('media/documents/press kit.pdf')).rejects.toThrow(/ENOENT/)
    state = await expectOnly(up.api, state)
    await rm(path.join(ws.root, 'media/brand.svg'))
    await ws.ok('push')
    state = await expectOnly(up.api, state, { removed: [`media/${ids['logo.svg']}`] })
    await ws.expectClean()
  })
})
