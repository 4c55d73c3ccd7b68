import { spawn, spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect, test } from 'vitest'
import { CliError, ExitCode } from '../../src/errors/exit-codes.js'
import { acquireLock } from '../../src/state/lock.js'

/** The pid of a process that has exited. */
const deadPid = () =>
  spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString()

test('a second holder is refused with exit 5 naming the holder pid', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'lock-'))
  const release = await acquireLock(root)
  const second = await acquireLock(root).catch((error: unknown) => error)
  expect(second).toBeInstanceOf(CliError)
  expect((second as CliError).exitCode).toBe(ExitCode.locked)
  expect((second as CliError).message).toContain(String(process.pid))
  await release()
  await (await acquireLock(root))()
})

test('the lock of a killed process is taken over at once', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'lock-'))
  // Given a lock left behind by a process that no longer exists
  const dead = deadPid()
  await mkdir(path.join(root, '.cms-sync', 'lock'), { recursive: true })
  await writeFile(path.join(root, '.cms-sync', 'lock.pid'), dead)
  // When we lock, Then it works without waiting for the stale timeout
  const release = await acquireLock(root)
  await release()
})

test('a lock whose holder was killed before naming itself is taken over at once, unless a contender lives', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'lock-'))
  const dead = deadPid()
  // Given a lock with no lock.pid, and only the dead process's candidate file next to it
  await mkdir(path.join(root, '.cms-sync', 'lock'), { recursive: true })
  await writeFile(path.join(root, '.cms-sync', `lock.${dead}.pid`), dead)
  // Then it is taken over without waiting for the stale timeout
  const release = await acquireLock(root)
  await release()
  // But while a process that may be the holder is alive, the lock stands (exit 5)
  const contender = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'])
  try {
    await mkdir(path.join(root, '.cms-sync', 'lock'), { recursive: true })
    await writeFile(path.join(root, '.cms-sync', `lock.${contender.pid}.pid`), String(contender.pid))
    const refused = await acquireLock(root).catch((error: unknown) => error)
    expect((refused as CliError).exitCode).toBe(ExitCode.locked)
  } finally {
    contender.kill('SIGKILL')
  }
})
