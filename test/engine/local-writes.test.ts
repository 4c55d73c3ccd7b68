// Every file a run puts in the workspace is announced first with the sha256 of its bytes, so
// the watcher drops the echo of cms-sync's own write (media downloads and moves included)
// but still sees a user's edit that lands after it.

import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { LocalWriter } from '../../src/workspace/local-writes.js'

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex')

test('writes, media downloads and media moves are announced with the hash of what lands', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'cms-sync-writes-'))
  const told: Array<[string, string]> = []
  const writer = new LocalWriter(root, 'run', (rel, hash) => told.push([rel, hash]))

  await writer.write('content/home.json', '{"id":"home"}\n')
  const download = path.join(root, 'download.tmp')
  const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2])
  await writeFile(download, bytes)
  await writer.place('media/a.png', download, { sha256: sha256(bytes), fresh: true })
  await mkdir(path.join(root, 'media', 'b'), { recursive: true })
  await writer.move('media/a.png', 'media/b/a.png', sha256(bytes))

  expect(told).toEqual([
    ['content/home.json', sha256('{"id":"home"}\n')],
    ['media/a.png', sha256(bytes)],
    ['media/a.png', 'deleted'],
    ['media/b/a.png', sha256(bytes)],
  ])
  expect(sha256(await readFile(path.join(root, 'media', 'b', 'a.png')))).toBe(sha256(bytes))
})
