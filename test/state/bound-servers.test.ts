// The servers a workspace is bound to, read from the head of the state and the target line of
// the lock only (the check runs before every command connects).

import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { boundServers } from '../../src/state/bound-servers.js'
import { lockText } from '../../src/state/committed-base.js'
import { emptyState, StateStore } from '../../src/state/state-file.js'

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

test('the lock the state saved is known by its stat; a lock changed since is read for its target', async () => {
  const root = await workspace()
  const store = new StateStore(root, emptyState(target('http://a:1')))
  await store.commit({
    kind: 'content',
    id: 'home',
    path: 'content/home.json',
    baseHash: 'a'.repeat(64),
    remoteRev: 'r1',
  })
  await store.flush()
  expect(await boundServers(root)).toEqual([
    { file: '.cms-sync/state/index.json', server: 'http://a:1' },
    { file: 'cms-sync.lock', server: 'http://a:1' },
  ])
  // git put another lock in its place (a merge from a branch bound elsewhere): same size, new stat.
  const lock = path.join(root, 'cms-sync.lock')
  await writeFile(lock, (await readFile(lock, 'utf8')).replace('http://a:1', 'http://b:1'))
  expect(await boundServers(root)).toEqual([
    { file: '.cms-sync/state/index.json', server: 'http://a:1' },
    { file: 'cms-sync.lock', server: 'http://b:1' },
  ])
})
