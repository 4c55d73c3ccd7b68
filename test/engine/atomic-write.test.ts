import { spawn } from 'node:child_process'
import { existsSync, realpathSync, statSync, watch } from 'node:fs'
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createFileAtomically, FileAppearedError, writeFileAtomically } from '../../src/util/atomic-write.js'
import { cleanLeftTempFiles } from '../../src/workspace/temp-files.js'

describe('writeFileAtomically', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cms-sync-atomic-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  test('creates a file and leaves no temp file behind', async () => {
    await writeFileAtomically(path.join(dir, 'a.json'), '{"a":1}\n')
    expect(await readFile(path.join(dir, 'a.json'), 'utf8')).toBe('{"a":1}\n')
    expect(await readdir(dir)).toEqual(['a.json'])
  })

  test('replaces a file and keeps its permissions', async () => {
    const file = path.join(dir, 'a.json')
    await writeFile(file, 'old')
    await chmod(file, 0o640)
    await writeFileAtomically(file, 'new')
    expect(await readFile(file, 'utf8')).toBe('new')
    expect((await stat(file)).mode & 0o777).toBe(0o640)
    expect(await readdir(dir)).toEqual(['a.json'])
  })

  test("a mode given is the new file's from the start, and narrows a file that had a wider one", async () => {
    const file = path.join(dir, 'secret.yaml')
    await writeFileAtomically(file, 'token: a\n', { mode: 0o600 })
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    await chmod(file, 0o644)
    await writeFileAtomically(file, 'token: b\n', { mode: 0o600 })
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect(await readFile(file, 'utf8')).toBe('token: b\n')
    expect(await readdir(dir)).toEqual(['secret.yaml'])
  })

  // Only root may give a file to another user: a run as root (sudo) keeps the user's ownership.
  test.runIf(process.getuid?.() === 0)('a file replaced by root keeps its owner', async () => {
    const file = path.join(dir, 'a.json')
    await writeFile(file, 'old')
    await chown(file, 4321, 4322)
    await writeFileAtomically(file, 'new')
    const after = await stat(file)
    expect([after.uid, after.gid]).toEqual([4321, 4322])
    expect(await readFile(file, 'utf8')).toBe('new')
  })

  test('through a link, replaces the file it points at and keeps the link', async () => {
    const real = path.join(dir, 'real.json')
    const link = path.join(dir, 'link.json')
    await writeFile(real, 'old')
    await symlink(real, link)
    await writeFileAtomically(link, 'new')
    expect((await lstat(link)).isSymbolicLink()).toBe(true)
    expect(await readlink(link)).toBe(real)
    expect(await readFile(real, 'utf8')).toBe('new')
  })

  test('a failed write leaves the old file and no temp file', async () => {
    const file = path.join(dir, 'missing-folder', 'a.json')
    await expect(writeFileAtomically(file, 'x')).rejects.toThrow(/ENOENT/)
    expect(await readdir(dir)).toEqual([])
  })

  test('returns the stat of the bytes it wrote', async () => {
    const file = path.join(dir, 'a.json')
    const written = await writeFileAtomically(file, 'hello', { fsync: false })
    const now = await stat(file)
    expect(written).toEqual({ size: 5, mtimeMs: now.mtimeMs, ino: now.ino })
  })
})

// With and without fsync: the same writer, durability left to the caller in the second case.
describe.each([
  ['fsync', { fsync: true }],
  ['no fsync', { fsync: false }],
])('createFileAtomically (%s)', (_mode, opts) => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cms-sync-create-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  test('creates a new file whole and leaves no temp file', async () => {
    const written = await createFileAtomically(path.join(dir, 'a.json'), '{"a":1}\n', opts)
    expect(await readFile(path.join(dir, 'a.json'), 'utf8')).toBe('{"a":1}\n')
    expect(await readdir(dir)).toEqual(['a.json'])
    expect(written.ino).toBe((await stat(path.join(dir, 'a.json'))).ino)
  })

  test('never replaces a file that took the name first, nor a link there', async () => {
    const file = path.join(dir, 'a.json')
    await writeFile(file, 'the user wrote this')
    await expect(createFileAtomically(file, 'ours', opts)).rejects.toBeInstanceOf(FileAppearedError)
    expect(await readFile(file, 'utf8')).toBe('the user wrote this')
    await symlink(path.join(dir, 'nowhere'), path.join(dir, 'b.json'))
    await expect(createFileAtomically(path.join(dir, 'b.json'), 'ours', opts)).rejects.toBeInstanceOf(
      FileAppearedError,
    )
    expect((await readdir(dir)).sort()).toEqual(['a.json', 'b.json'])
  })

  test('many files at once: each whole, each stat its own, no temp file left', async () => {
    const names = Array.from({ length: 200 }, (_, i) => `n${i}.json`)
    const stats = await Promise.all(
      names.map((name) => createFileAtomically(path.join(dir, name), `{"n":"${name}"}`, opts)),
    )
    expect((await readdir(dir)).sort()).toEqual([...names].sort())
    for (const [i, name] of names.entries()) {
      expect(await readFile(path.join(dir, name), 'utf8')).toBe(`{"n":"${name}"}`)
      expect(stats[i]!.ino).toBe((await stat(path.join(dir, name))).ino)
    }
  })

  test('through a temp folder: made on first use, made again when removed, left empty', async () => {
    const tempDir = path.join(dir, 'tmp')
    await createFileAtomically(path.join(dir, 'a.json'), 'a', { ...opts, tempDir })
    expect(await readdir(tempDir)).toEqual([])
    // .cms-sync/ removed while the process runs: the next write makes the folder again.
    await rm(tempDir, { recursive: true })
    await createFileAtomically(path.join(dir, 'b.json'), 'b', { ...opts, tempDir })
    expect(await readdir(tempDir)).toEqual([])
    expect(await readFile(path.join(dir, 'b.json'), 'utf8')).toBe('b')
    await expect(
      createFileAtomically(path.join(dir, 'b.json'), 'c', { ...opts, tempDir }),
    ).rejects.toBeInstanceOf(FileAppearedError)
    expect(await readdir(tempDir)).toEqual([])
  })

  test('a folder that is not there fails the write and leaves nothing behind', async () => {
    await expect(createFileAtomically(path.join(dir, 'missing', 'a.json'), 'x', opts)).rejects.toThrow(
      /ENOENT/,
    )
    expect(await readdir(dir)).toEqual([])
  })
})

// A temp folder on another file system than the target (a workspace folder that is a mount)
// makes the writer fall back to a temp file beside the target, where the synced folders are.
const otherDevice = '/dev/shm'
const crossDevice = (() => {
  try {
    return statSync(otherDevice).dev !== statSync(tmpdir()).dev
  } catch {
    return false
  }
})()

describe.runIf(crossDevice)('a write across file systems', () => {
  let dir: string
  let tempDir: string
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cms-sync-across-'))
    tempDir = await mkdtemp(path.join(otherDevice, 'cms-sync-across-tmp-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
    await rm(tempDir, { recursive: true, force: true })
  })

  test('writes the file whole and leaves nothing in either folder', async () => {
    await writeFileAtomically(path.join(dir, 'a.json'), 'a', { tempDir })
    await createFileAtomically(path.join(dir, 'b.json'), 'b', { tempDir })
    expect((await readdir(dir)).sort()).toEqual(['a.json', 'b.json'])
    expect(await readFile(path.join(dir, 'a.json'), 'utf8')).toBe('a')
    expect(await readdir(tempDir)).toEqual([])
  })

  test('killed mid-write, its temp file beside the target is named in the temp folder', async () => {
    const target = path.join(dir, 'home.json')
    const script = path.join(dir, 'writer.mts')
    const module = path.resolve(import.meta.dirname, '../../src/util/atomic-write.ts')
    await writeFile(
      script,
      `import { writeFileAtomically } from ${JSON.stringify(module)}\n` +
        `await writeFileAtomically(${JSON.stringify(target)}, Buffer.alloc(1024 * 1024 * 1024, 120), { tempDir: ${JSON.stringify(tempDir)} })\n`,
    )
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: 'ignore' })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    // Killed once its temp file beside the target holds bytes: the write is under way. The
    // folder's events (the temp file made, then written to) say when to look.
    const holdsBytes = async () => {
      const temp = (await readdir(dir)).find((name) => name.startsWith('home.json.'))
      return temp !== undefined && (await stat(path.join(dir, temp))).size > 0
    }
    await new Promise<void>((resolve, reject) => {
      const folder = watch(dir, () => void look())
      const done = (end: () => void) => {
        folder.close()
        end()
      }
      const look = async () => {
        try {
          if (await holdsBytes()) done(resolve)
        } catch (error) {
          done(() => reject(error))
        }
      }
      child.once('exit', () =>
        done(() => reject(new Error('the writer ended before its temp file held bytes'))),
      )
      void look()
    })
    child.kill('SIGKILL')
    await exited
    const temp = (await readdir(dir)).find((name) => name.startsWith('home.json.'))
    expect(temp).toMatch(/^home\.json\.\d{10}$/)
    const records = await readdir(tempDir)
    expect(records).toEqual([expect.stringMatching(new RegExp(`^sibling-${child.pid}-\\d+$`))])
    expect(await readFile(path.join(tempDir, records[0]!), 'utf8')).toBe(path.join(dir, temp!))
  }, 60_000)
})

test('a temp file a killed write recorded is swept when the workspace is named through a link', async () => {
  const real = realpathSync(await mkdtemp(path.join(tmpdir(), 'cms-sync-linked-')))
  const link = `${real}-link`
  await symlink(real, link)
  try {
    await mkdir(path.join(real, 'content'), { recursive: true })
    await mkdir(path.join(real, '.cms-sync', 'tmp'), { recursive: true })
    const temp = path.join(real, 'content', 'home.json.1234567891')
    await writeFile(temp, '{"torn":')
    // The writer records the temp file's path with links resolved; no process has pid 999999999.
    await writeFile(path.join(real, '.cms-sync', 'tmp', 'sibling-999999999-1'), temp)
    const cleaned = await cleanLeftTempFiles(link, { folders: false })
    expect(cleaned).toContain('content/home.json.1234567891')
    expect(existsSync(temp)).toBe(false)
  } finally {
    await rm(link, { force: true })
    await rm(real, { recursive: true, force: true })
  }
})
