import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { CODECS } from '../../src/workspace/codecs.js'
import { fileReads, statLocalFile } from '../../src/workspace/local-file.js'
import { scanWorkspace } from '../../src/workspace/scan.js'

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

test('a symbolic link out of the workspace is not followed', async () => {
  const outside = await workspace({ 'secret.json': '{"schemaId":"page"}' })
  const root = await workspace({})
  await mkdir(path.join(root, 'content'))
  await symlink(path.join(outside, 'secret.json'), path.join(root, 'content/leak.json'))
  const { entries, problems } = await scanWorkspace(root, CODECS, () => undefined)
  expect(entries).toEqual([])
  expect(problems).toMatchObject([
    { path: 'content/leak.json', problems: [expect.stringMatching(/outside the workspace/)] },
  ])
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
  fileReads.count = 0
  const { entries } = await scanWorkspace(root, CODECS, (p) => (p === 'content/a.json' ? cached : undefined))
  expect(entries[0]?.hash).toBe('BASE')
  expect(fileReads.count).toBe(0)
})
