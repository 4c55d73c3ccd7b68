// The servers a workspace is bound to, read from the head of the state and the target line of
// the lock only (the check runs before every command connects).

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { boundServers } from '../../src/state/bound-servers.js'
import { lockText } from '../../src/state/committed-base.js'

const target = (server: string) => ({ server, project: 'demo', environment: 'live' })

async function workspace(): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'cms-sync-bound-'))
  await mkdir(path.join(root, '.cms-sync'))
  return root
}

test('the state and the lock each name their server; a new workspace is bound to none', async () => {
  const root = await workspace()
  expect(await boundServers(root)).toEqual([])
  await writeFile(
    path.join(root, '.cms-sync', 'state.json'),
    JSON.stringify({ version: 2, target: target('http://a:1'), items: { x: { id: '{"lock":1}' } } }),
  )
  await writeFile(path.join(root, 'cms-sync.lock'), lockText(target('http://b:2'), []))
  expect(await boundServers(root)).toEqual([
    { file: '.cms-sync/state.json', server: 'http://a:1' },
    { file: 'cms-sync.lock', server: 'http://b:2' },
  ])
})

test('a state in another key order is read whole; unreadable records bind nothing', async () => {
  const root = await workspace()
  await writeFile(
    path.join(root, '.cms-sync', 'state.json'),
    JSON.stringify({ target: target('http://a:1'), version: 2, items: {} }),
  )
  await writeFile(path.join(root, 'cms-sync.lock'), '# broken\n{"lock": 1, "server": "http://b:2"\n')
  expect(await boundServers(root)).toEqual([{ file: '.cms-sync/state.json', server: 'http://a:1' }])
  await writeFile(path.join(root, '.cms-sync', 'state.json'), 'not json')
  expect(await boundServers(root)).toEqual([])
})
