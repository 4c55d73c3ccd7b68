// No read or write of a workspace file goes through a symbolic link (src/workspace/no-follow.ts):
// the check of every part of a path, the reads with O_NOFOLLOW, the writer's refusals, and the
// refusal of cms-sync's own files as links.

import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { FileAppearedError } from '../../src/util/atomic-write.js'
import { LocalWriter } from '../../src/workspace/local-writes.js'
import { readMediaIndex } from '../../src/workspace/media-index.js'
import {
  linkOnPath,
  ownEntryLink,
  readNoFollow,
  refuseOwnLinks,
  SymbolicLinkError,
} from '../../src/workspace/no-follow.js'

async function tree(): Promise<{ root: string; outside: string }> {
  const base = await mkdtemp(path.join(tmpdir(), 'cms-sync-no-follow-'))
  const root = path.join(base, 'site')
  const outside = path.join(base, 'outside')
  await mkdir(path.join(root, 'content'), { recursive: true })
  await mkdir(outside)
  await writeFile(path.join(outside, 'secret.json'), '{"secret":true}\n')
  return { root, outside }
}

test('linkOnPath names the first part that is a link, and stops at a part that is not there', async () => {
  const { root, outside } = await tree()
  await symlink(outside, path.join(root, 'media'))
  await symlink(path.join(outside, 'secret.json'), path.join(root, 'content', 'leak.json'))
  expect(linkOnPath(root, 'media/keys/id_rsa')).toBe('media')
  expect(linkOnPath(root, 'content/leak.json')).toBe('content/leak.json')
  expect(linkOnPath(root, 'content/home.json')).toBeUndefined()
  expect(linkOnPath(root, 'schemas/new/a.json')).toBeUndefined()
})

test('reads never follow a link, in the last part (O_NOFOLLOW) or above it', async () => {
  const { root, outside } = await tree()
  await symlink(path.join(outside, 'secret.json'), path.join(root, 'content', 'leak.json'))
  await symlink(outside, path.join(root, 'schemas'))
  await expect(readNoFollow(root, 'content/leak.json')).rejects.toBeInstanceOf(SymbolicLinkError)
  await expect(readNoFollow(root, 'schemas/secret.json')).rejects.toThrow(/^schemas: a symbolic link \(to /)
  await writeFile(path.join(root, 'content', 'home.json'), 'plain')
  expect(await readNoFollow(root, 'content/home.json')).toBe('plain')
})

test('the writer refuses every write, trash copy and delete through a link, and changes nothing', async () => {
  const { root, outside } = await tree()
  await symlink(outside, path.join(root, 'media'))
  await symlink(path.join(outside, 'secret.json'), path.join(root, 'content', 'leak.json'))
  const writer = new LocalWriter(root, 'run')
  await expect(writer.write('content/leak.json', 'server text')).rejects.toBeInstanceOf(SymbolicLinkError)
  await expect(writer.create('media/new.txt', 'server text')).rejects.toThrow(/^media: a symbolic link/)
  await expect(writer.remove('content/leak.json')).rejects.toBeInstanceOf(SymbolicLinkError)
  const download = path.join(root, 'download.tmp')
  await writeFile(download, 'bytes')
  await expect(
    writer.place('media/keys/authorized_keys', download, { sha256: 'x', fresh: true }),
  ).rejects.toThrow(/^media: a symbolic link/)
  expect(await readdir(outside)).toEqual(['secret.json'])
  expect(await readFile(path.join(outside, 'secret.json'), 'utf8')).toBe('{"secret":true}\n')
  expect((await readdir(path.join(root, '.cms-sync')).catch(() => [])).length).toBe(0)
})

test('a new file whose name a link took after the plan saw it free: refused, nothing written through it', async () => {
  // create() and place() check only the folders; the name is taken with link(), which neither
  // follows a link in its place nor replaces one, dangling or not.
  const { root, outside } = await tree()
  await mkdir(path.join(root, 'media'))
  await symlink(path.join(outside, 'secret.json'), path.join(root, 'content', 'taken.json'))
  await symlink(path.join(outside, 'new.json'), path.join(root, 'content', 'dangling.json'))
  await symlink(path.join(outside, 'new.png'), path.join(root, 'media', 'dangling.png'))
  const writer = new LocalWriter(root, 'run')
  await expect(writer.create('content/taken.json', 'server text')).rejects.toBeInstanceOf(FileAppearedError)
  await expect(writer.create('content/dangling.json', 'server text')).rejects.toBeInstanceOf(
    FileAppearedError,
  )
  const download = path.join(root, 'download.tmp')
  await writeFile(download, 'bytes')
  await expect(
    writer.place('media/dangling.png', download, { sha256: 'x', fresh: true }),
  ).rejects.toBeInstanceOf(FileAppearedError)
  expect(await readdir(outside)).toEqual(['secret.json'])
  expect(await readFile(path.join(outside, 'secret.json'), 'utf8')).toBe('{"secret":true}\n')
  for (const link of ['content/taken.json', 'content/dangling.json', 'media/dangling.png']) {
    expect((await lstat(path.join(root, link))).isSymbolicLink(), link).toBe(true)
    expect(await readlink(path.join(root, link))).toMatch(/outside/)
  }
  // A free name is created as before, and a linked folder above it is still refused.
  await writer.create('content/home.json', 'server text')
  expect(await readFile(path.join(root, 'content', 'home.json'), 'utf8')).toBe('server text')
  await symlink(outside, path.join(root, 'schemas'))
  await expect(writer.create('schemas/new.json', 'x')).rejects.toThrow(/^schemas: a symbolic link/)
})

test("cms-sync's own files and .cms-sync/ as links: refused before anything is read (exit 2)", async () => {
  for (const name of [
    'cms-sync.yaml',
    'cms-sync.lock',
    'media.yaml',
    '.cmsyncignore',
    '.cms-sync',
    '.cms-sync/logs',
  ]) {
    const { root, outside } = await tree()
    await writeFile(
      path.join(root, 'cms-sync.yaml'),
      'server: http://127.0.0.1:1\nproject: demo\nenvironment: live\n',
    )
    if (name === '.cms-sync/logs') await mkdir(path.join(root, '.cms-sync'))
    if (name === 'cms-sync.yaml')
      await writeFile(
        path.join(outside, 'copy.yaml'),
        'server: http://127.0.0.1:1\nproject: demo\nenvironment: live\n',
      )
    const file = path.join(root, ...name.split('/'))
    await import('node:fs/promises').then((fs) => fs.rm(file, { force: true }))
    await symlink(path.join(outside, name === 'cms-sync.yaml' ? 'copy.yaml' : 'anything'), file)
    expect(ownEntryLink(root)?.link, name).toBe(name)
    let refused: unknown
    try {
      refuseOwnLinks(root)
    } catch (error) {
      refused = error
    }
    expect(refused, name).toMatchObject({ exitCode: 2 })
    expect((refused as Error).message, name).toMatch(
      new RegExp(`^${name.replace('.', '\\.')}: a symbolic link \\(to `),
    )
  }
})

test('media.yaml through a link is never read, even when the start-up check was passed', async () => {
  const { root, outside } = await tree()
  await writeFile(path.join(outside, '.bashrc'), 'a.png: "123"\n')
  await symlink(path.join(outside, '.bashrc'), path.join(root, 'media.yaml'))
  // Named once: the index's own error names the file, the link's problem follows.
  await expect(readMediaIndex(root)).rejects.toThrow(/^media\.yaml: a symbolic link \(to .*; fix the file/)
})
