// The built CLI where a terminal or a pipe changes what happens: a reader that goes away early
// (`cms-sync diff | head -1`), and a pseudo-terminal for what only shows on one.

import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { runBuiltPipedToHead } from '../helpers/built-cli.js'
import { startWorld, type World } from '../helpers/sync-world.js'

let world: World

beforeAll(async () => {
  world = await startWorld('spec')
  const first = await world.cli('sync')
  if (first.exitCode !== 0) throw new Error(first.stderr)
}, 60_000)

afterAll(async () => {
  await world?.close()
})

describe('a closed pipe', () => {
  test('`cms-sync diff | head -1` ends quietly, with no Node stack', async () => {
    // Far more than a pipe buffer (64 KiB), so the diff is still writing when head has gone.
    const lines = Array.from({ length: 8000 }, (_, i) => `line ${i} of a long edit`)
    await world.editJson('content/home.json', { properties: { title: 'Edited', lines } })
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await runBuiltPipedToHead(['diff'], 1, {
        cwd: world.root,
        env: { ...world.env, NO_COLOR: '1' },
      })
      expect(result.stdout).toMatch(/^--- remote\/content\/home\.json\n$/)
      expect(result.stderr).toBe('')
      expect(result.signal).toBeNull()
      expect(result.code).toBe(0)
    }
  })
})

describe('on a terminal', () => {
  test('login asks for the password without echoing it, on the shipped CLI', async () => {
    const { mkdtemp } = await import('node:fs/promises')
    const os = await import('node:os')
    const path = await import('node:path')
    const xdg = await mkdtemp(path.join(os.tmpdir(), 'cms-sync-tty-'))
    const { runBuiltInTty } = await import('../helpers/built-cli.js')
    const result = await runBuiltInTty(['login', '--username', 'admin'], {
      cwd: world.root,
      env: { XDG_CONFIG_HOME: xdg, NO_COLOR: '1' },
      waitFor: `Password for admin at ${world.proxy.url}: `,
      input: 'admin\r',
    })
    expect(result.output).toContain(`Password for admin at ${world.proxy.url}: `)
    expect(result.output).toContain(`logged in to ${world.proxy.url} as admin`)
    expect(result.output).not.toContain(`Password for admin at ${world.proxy.url}: admin`)
    expect(result.code).toBe(0)
  })
})
