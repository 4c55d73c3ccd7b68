// The state stored so that one item is read and written without the rest (record-store.ts):
// a get() reads its bucket alone, a save writes the buckets it changed and then the index that
// names them (the commit), and cms-sync.lock gets the changed lines in their places, or nothing.

import { existsSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { lineOf, lockFilePath, lockText, readLockText } from '../../src/state/committed-base.js'
import { FileBytes, lockPatches, spliceLock } from '../../src/state/lock-splice.js'
import { bucketOf, indexPath, readIndex, stateDirPath } from '../../src/state/record-store.js'
import { type ItemState, loadState, StateStore } from '../../src/state/state-file.js'

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})
async function tempRoot(): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'cms-sync-records-'))
  dirs.push(root)
  return root
}

const target = { server: 'http://x', project: 'demo', environment: 'live' }
const item = (id: string, rev = 'r1', inherited = false): ItemState => ({
  kind: id.startsWith('s') ? 'schema' : 'content',
  id,
  path: `${id.startsWith('s') ? 'schemas' : 'content'}/${id}.json`,
  baseHash: 'a'.repeat(64),
  remoteRev: rev,
  stat: { size: 10, mtimeMs: 1, ino: 2 },
  ...(inherited ? { inherited: true as const } : {}),
})
const ids = Array.from({ length: 2000 }, (_, n) => `page-${n}`)

/** A saved state of `ids` (and two schemas, one inherited page), with its lock. */
async function savedStore(root: string): Promise<void> {
  const items = Object.fromEntries(
    [...ids.map((id) => item(id)), item('s1'), item('s2'), item('common', 'r1', true)].map((it) => [
      it.path,
      it,
    ]),
  )
  const store = new StateStore(root, { version: 2, target, items })
  await store.save()
}

test('get() of one path reads its bucket alone; the counts come from the index', async () => {
  const root = await tempRoot()
  await savedStore(root)
  const store = (await StateStore.open(root))!
  const { index } = readIndex(root)!
  const wanted = 'content/page-7.json'
  const own = index.files[bucketOf(wanted, index.buckets)]
  // Every other bucket made unreadable: a get() that read them would fail.
  for (const name of readdirSync(stateDirPath(root)))
    if (name !== own && name !== 'index.json') await writeFile(stateDirPath(root, name), 'not json')
  expect(store.get(wanted)).toMatchObject({ id: 'page-7', remoteRev: 'r1' })
  expect(store.countOf('content')).toBe(2001)
  expect(store.countOf('schema')).toBe(2)
  expect(store.inheritedCount).toBe(1)
  expect(store.size).toBe(2003)
  expect(() => store.items()).toThrow(/unreadable.*move it away/)
})

test('a save writes the changed buckets and the index; the lock gets the changed lines only, and an unchanged save writes neither', async () => {
  const root = await tempRoot()
  await savedStore(root)
  const filesBefore = new Set(readdirSync(stateDirPath(root)))
  const lockBefore = statSync(lockFilePath(root))
  const indexBefore = await readFile(indexPath(root), 'utf8')

  // A stat cache refresh: the state's bucket changes, no line of the lock does.
  const store = (await StateStore.open(root))!
  expect(store.lockUnmoved()).toBe(true)
  await store.commit({ ...item('page-3'), stat: { size: 10, mtimeMs: 5, ino: 2 } })
  await store.flush()
  const filesAfter = readdirSync(stateDirPath(root)).filter((name) => !filesBefore.has(name))
  expect(filesAfter).toHaveLength(1)
  expect(statSync(lockFilePath(root)).ino).toBe(lockBefore.ino)
  expect(await readFile(indexPath(root), 'utf8')).not.toBe(indexBefore)

  // A new base, an item gone, one new: three lines, spliced where the sorted lock has them.
  const next = (await StateStore.open(root))!
  expect(next.lockUnmoved()).toBe(true)
  await next.commit(item('page-42', 'r2'))
  await next.forget('content/page-1000.json')
  await next.commit(item('page-2000a'))
  await next.flush()
  const all = (await loadState(root))!
  expect(await readFile(lockFilePath(root), 'utf8')).toBe(lockText(target, Object.values(all.items)))
  expect(next.countOf('content')).toBe(2001)

  // A run that changes nothing writes nothing at all.
  const idleIndex = await readFile(indexPath(root), 'utf8')
  const idleLock = statSync(lockFilePath(root))
  const idle = (await StateStore.open(root))!
  expect(idle.lockUnmoved()).toBe(true)
  await idle.flush()
  expect(await readFile(indexPath(root), 'utf8')).toBe(idleIndex)
  expect(statSync(lockFilePath(root)).ino).toBe(idleLock.ino)
})

test('files of a save the index never named (a kill before its rename) are not records, and go with the next save', async () => {
  const root = await tempRoot()
  await savedStore(root)
  const stray = stateDirPath(root, '0a-killed-1-1.json')
  await writeFile(stray, JSON.stringify([item('page-0', 'from-a-killed-save')]))
  const store = (await StateStore.open(root))!
  expect(store.items().find((it) => it.remoteRev === 'from-a-killed-save')).toBeUndefined()
  await store.commit(item('page-1', 'r2'))
  await store.flush()
  expect(readdirSync(stateDirPath(root))).not.toContain('0a-killed-1-1.json')
})

test('a lock git moved is joined, not spliced: the next save makes it whole', async () => {
  const root = await tempRoot()
  await savedStore(root)
  const text = await readFile(lockFilePath(root), 'utf8')
  // A line git changed (a pull of a colleague's sync) and a stray comment.
  const moved = text
    .replace(lineOf(item('page-5')), lineOf(item('page-5', 'theirs')))
    .replace('\n{', '\n# hi\n{')
  await writeFile(lockFilePath(root), moved)
  const store = (await StateStore.open(root))!
  expect(store.lockUnmoved()).toBe(false)
  const read = (await readLockText(root))!
  expect(read.text).toBe(moved)
  expect(store.recognizeLock(read.text, read.stat)).toBe(false)
  store.alternates.set('content/page-5.json', { ...item('page-5', 'theirs'), fromLock: true })
  await store.commit(item('page-9', 'r2'))
  await store.flush()
  // The alternate's line stays the lock's; the comment goes with the lock made whole.
  const written = await readFile(lockFilePath(root), 'utf8')
  expect(written).toBe(store.lockText())
  expect(written).toContain(lineOf(item('page-5', 'theirs')))
  expect(written).not.toContain('# hi')
})

/** git puts another lock in place (a checkout of an older commit): one line, same length, a new file. */
function gitWritesLock(root: string, text: string): void {
  const older = text.replace(lineOf(item('page-5')), lineOf(item('page-5', 'r0')))
  expect(older.length).toBe(text.length)
  writeFileSync(`${lockFilePath(root)}.git`, older)
  renameSync(`${lockFilePath(root)}.git`, lockFilePath(root))
}

test("a lock git replaces after the run read it is not taken for the records' own, nor noted as such", async () => {
  const root = await tempRoot()
  await savedStore(root)
  // The lock's stat not noted (a kill before it was): the run reads the lock and compares it.
  await rm(stateDirPath(root, 'lock-seen.json'), { force: true })
  const store = (await StateStore.open(root))!
  expect(store.lockUnmoved()).toBe(false)
  const read = (await readLockText(root))!
  gitWritesLock(root, read.text) // while the run compares what it read with its records
  expect(store.recognizeLock(read.text, read.stat)).toBe(false)
  await store.commit(item('page-9', 'r2'))
  await store.flush()
  // Not spliced into git's file: the lock is the records' again, and the next run may trust it.
  expect(await readFile(lockFilePath(root), 'utf8')).toBe(store.lockText())
})

test('a lock found equal to the records and replaced by git before the save ends is not noted as theirs', async () => {
  const root = await tempRoot()
  await savedStore(root)
  await rm(stateDirPath(root, 'lock-seen.json'), { force: true })
  // Saved only when flushed, so the save starts here.
  const store = (await StateStore.open(root, { items: 1000, ms: Number.POSITIVE_INFINITY }))!
  const text = await readFile(lockFilePath(root), 'utf8')
  // A save with nothing for the lock: it reads the lock, finds it equal, and writes none.
  await store.commit({ ...item('page-9'), stat: { size: 11, mtimeMs: 2, ino: 3 } })
  const saving = store.flush()
  gitWritesLock(root, text) // while the save writes the records
  await saving
  const next = (await StateStore.open(root))!
  // Not vouched for by its stat: the next run reads git's lock and finds its line.
  expect(next.lockUnmoved()).toBe(false)
  expect((await readLockText(root))!.text).toContain(lineOf(item('page-5', 'r0')))
})

test('spliceLock gives the text made whole, for lines replaced, added before, between and after, and removed', () => {
  const items = ['b', 'd', 'f', 'h'].map((id) => item(id))
  const text = lockText(target, items)
  const cases: { change: { path: string; line: string | undefined }[]; after: ItemState[] }[] = [
    { change: [{ path: 'content/a.json', line: lineOf(item('a')) }], after: [item('a'), ...items] },
    { change: [{ path: 'content/z.json', line: lineOf(item('z')) }], after: [...items, item('z')] },
    {
      change: [
        { path: 'content/e.json', line: lineOf(item('e')) },
        { path: 'content/d.json', line: lineOf(item('d', 'r9')) },
        { path: 'content/h.json', line: undefined },
      ],
      after: [item('b'), item('d', 'r9'), item('e'), item('f')],
    },
    { change: [{ path: 'content/c.json', line: undefined }], after: items },
  ]
  const bytes = Buffer.from(text)
  for (const { change, after } of cases) {
    const spliced = spliceLock(bytes, change) ?? bytes
    expect(spliced.toString()).toBe(lockText(target, after))
  }
  expect(spliceLock(bytes, [{ path: 'content/b.json', line: lineOf(item('b')) }])).toBeUndefined()
  const empty = Buffer.from(lockText(target, []))
  expect(spliceLock(empty, [{ path: 'content/a.json', line: lineOf(item('a')) }])?.toString()).toBe(
    lockText(target, [item('a')]),
  )
  // Paths beyond ASCII: the search runs over bytes, the order is the lock's (code units).
  const odd = [item('b'), item('é'), item('日本')]
  const oddText = Buffer.from(lockText(target, odd))
  expect(spliceLock(oddText, [{ path: 'content/f.json', line: lineOf(item('f')) }])?.toString()).toBe(
    lockText(target, [...odd, item('f')]),
  )
})

test('a state.json of version 2 is converted by the first save, and its lock known by its stat from then on', async () => {
  const root = await tempRoot()
  const items = Object.fromEntries(ids.slice(0, 50).map((id) => [`content/${id}.json`, item(id)]))
  await mkdir(path.join(root, '.cms-sync'), { recursive: true })
  await writeFile(path.join(root, '.cms-sync', 'state.json'), JSON.stringify({ version: 2, target, items }))
  const text = lockText(target, Object.values(items))
  await writeFile(lockFilePath(root), text)
  const store = (await StateStore.open(root))!
  expect(store.lockUnmoved()).toBe(false)
  const read = (await readLockText(root))!
  expect(store.recognizeLock(read.text, read.stat)).toBe(true)
  // The first save converts, even where nothing changed since (a push of nothing, a pull of nothing).
  await store.flush()
  expect(existsSync(path.join(root, '.cms-sync', 'state.json'))).toBe(false)
  expect((await loadState(root))?.items).toEqual(items)
  expect(await readFile(lockFilePath(root), 'utf8')).toBe(text)
  expect((await StateStore.open(root))!.lockUnmoved()).toBe(true)
})

test('a save whose lines keep their length patches a copy of the lock in place; one that adds, removes or lengthens a line splices', async () => {
  const root = await tempRoot()
  await savedStore(root)
  const check = async (change: (store: StateStore) => Promise<void>) => {
    const store = (await StateStore.open(root))!
    expect(store.lockUnmoved()).toBe(true)
    await change(store)
    await store.flush()
    const all = (await loadState(root))!
    expect(await readFile(lockFilePath(root), 'utf8')).toBe(lockText(target, Object.values(all.items)))
    // Known by its stat at the next run, however it was written.
    expect((await StateStore.open(root))!.lockUnmoved()).toBe(true)
    expect(readdirSync(path.join(root, '.cms-sync', 'tmp'))).toEqual([])
  }
  // A new revision of the same length: the lines stay where they are.
  await check(async (store) => {
    await store.commit(item('page-0', 'r2'))
    await store.commit(item('page-1999', 'r2'))
    await store.commit(item('s2', 'r2'))
  })
  // Longer, added, removed.
  await check(async (store) => {
    await store.commit(item('page-5', 'r22'))
    await store.commit(item('page-5a'))
    await store.forget('content/page-6.json')
  })
  // The first and the last line, with a line of another length elsewhere in the same save.
  await check(async (store) => {
    await store.commit(item('common', 'r3', true))
    await store.commit(item('s1', 'r3'))
    await store.commit(item('page-7', 'r'))
  })
})

test('a lock git rewrote after the run found it its own is made whole from the state, never spliced into', async () => {
  const root = await tempRoot()
  await savedStore(root)
  const store = (await StateStore.open(root))!
  expect(store.lockUnmoved()).toBe(true)
  // While the run works, git writes the lock: a merge that left a conflict at the line the save changes.
  const text = await readFile(lockFilePath(root), 'utf8')
  const ours = lineOf(item('page-9'))
  await writeFile(
    lockFilePath(root),
    text.replace(ours, `<<<<<<< HEAD\n${ours}\n=======\n${lineOf(item('page-9', 'theirs'))}\n>>>>>>> theirs`),
  )
  await store.commit(item('page-9', 'r2'))
  await store.flush()
  expect(await readFile(lockFilePath(root), 'utf8')).toBe(store.lockText())
  expect((await StateStore.open(root))!.lockUnmoved()).toBe(true)
})

test('lockPatches finds the changed lines by reading a few pages of the lock file, and gives what spliceLock gives', async () => {
  const root = await tempRoot()
  const many = Array.from({ length: 50_000 }, (_, n) => item(`p-${n}`))
  const text = Buffer.from(lockText(target, many))
  await writeFile(lockFilePath(root), text)
  const changes = [
    { path: 'content/p-0.json', line: lineOf(item('p-0', 'r2')) },
    { path: 'content/p-42345.json', line: lineOf(item('p-42345', 'r3')) },
    { path: 'content/p-9999.json', line: lineOf(item('p-9999')) },
  ]
  const file = FileBytes.open(lockFilePath(root))!
  try {
    const patches = lockPatches(file, changes)!
    expect(patches).toHaveLength(2)
    // 7 MB in 64 KB pages: a binary search per line, not a read of the whole.
    expect(file.pagesRead).toBeLessThan(30)
    expect(text.length / (64 * 1024)).toBeGreaterThan(100)
    const patched = Buffer.from(text)
    for (const patch of patches) patched.set(patch.bytes, patch.offset)
    expect(patched.toString()).toBe(spliceLock(text, changes)!.toString())
  } finally {
    file.close()
  }
  // A line of another length, an added or a removed one: not a patch.
  for (const change of [
    { path: 'content/p-5.json', line: lineOf(item('p-5', 'r22')) },
    { path: 'content/p-5a.json', line: lineOf(item('p-5a')) },
    { path: 'content/p-5.json', line: undefined },
  ]) {
    const again = FileBytes.open(lockFilePath(root))!
    expect(lockPatches(again, [change])).toBeUndefined()
    again.close()
  }
})
