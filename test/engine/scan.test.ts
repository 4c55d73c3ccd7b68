import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { CODECS } from '../../src/workspace/codecs.js'
import { statLocalFile } from '../../src/workspace/local-file.js'
import { heldBy, scanWorkspace, unsyncedPaths } from '../../src/workspace/scan.js'

async function workspace(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'scan-'))
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true })
    await writeFile(path.join(root, rel), text)
  }
  return root
}

test('files are found per kind by their encoded id; other files are left alone', async () => {
  const root = await workspace({
    'content/a%2Fb.json': '{"schemaId":"page"}',
    'content/notes.txt': 'not ours',
    'schemas/s.json': '{"type":"field"}',
    'media/x.json': '{}',
  })
  const { entries, problems } = await scanWorkspace(root, CODECS, () => undefined)
  expect(entries.map((e) => [e.kind, e.id, e.path])).toEqual([
    ['schema', 's', 'schemas/s.json'],
    ['content', 'a/b', 'content/a%2Fb.json'],
  ])
  expect(problems).toEqual([])
})

test('a file name no id encodes to is a problem, not an item', async () => {
  const root = await workspace({ 'content/a%2fb.json': '{}' })
  const { entries, problems } = await scanWorkspace(root, CODECS, () => undefined)
  expect(entries).toEqual([])
  expect(problems).toMatchObject([
    { path: 'content/a%2fb.json', problems: [expect.stringMatching(/not the encoded form/)] },
  ])
})

test('a symbolic link is never followed, out of the workspace or inside it: its path is held', async () => {
  const outside = await workspace({ 'secret.json': '{"schemaId":"page"}' })
  const root = await workspace({ 'content/home.json': '{"schemaId":"page"}' })
  await symlink(path.join(outside, 'secret.json'), path.join(root, 'content/leak.json'))
  await symlink('home.json', path.join(root, 'content/alias.json'))
  const { entries, problems } = await scanWorkspace(root, CODECS, () => undefined)
  expect(entries.map((e) => e.path)).toEqual(['content/home.json'])
  expect(problems).toMatchObject([
    {
      path: 'content/alias.json',
      problems: [expect.stringMatching(/^not synced: a symbolic link \(to home\.json\)/)],
      unsynced: true,
    },
    {
      path: 'content/leak.json',
      problems: [expect.stringMatching(/^not synced: a symbolic link/)],
      unsynced: true,
    },
  ])
})

test('a linked kind folder is not read: one problem holds every path under it', async () => {
  const outside = await workspace({ 'page.json': '{"schemaId":"page"}' })
  const root = await workspace({})
  await symlink(outside, path.join(root, 'content'))
  const { entries, problems } = await scanWorkspace(root, CODECS, () => undefined)
  expect(entries).toEqual([])
  expect(problems).toMatchObject([{ path: 'content', unsynced: true }])
  const held = heldBy(unsyncedPaths(problems))
  expect([
    held('content/page.json'),
    held('content'),
    held('contents/x.json'),
    held('schemas/a.json'),
  ]).toEqual([true, true, false, false])
})

test('a file whose stat matches the cache is not read', async () => {
  const root = await workspace({ 'content/a.json': '{"schemaId":"page"}' })
  const stat = await statLocalFile(root, 'content/a.json')
  const cached = {
    kind: 'content' as const,
    id: 'a',
    path: 'content/a.json',
    baseHash: 'BASE',
    remoteRev: 'r',
    ...(stat ? { stat } : {}),
  }
  const { entries } = await scanWorkspace(root, CODECS, (p) => (p === 'content/a.json' ? cached : undefined))
  // A read would have hashed the bytes: the cached hash stands only because the file was not read.
  expect(entries[0]?.hash).toBe('BASE')
})
