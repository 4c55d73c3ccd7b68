// The Server, Settings, Test, Config and Schedule groups as users meet them: doctor, init's
// target check, server-config and the upcoming schedule in status, against real emulators.

import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cli } from '../helpers/cli.js'
import { inheritingWorld, startWorld, syncedWorld, type World } from '../helpers/sync-world.js'

const DIALECTS = ['spec', 'upstream'] as const
let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

/** A non-admin user on the world's server, and its token. */
async function nonAdminToken(w: World): Promise<string> {
  const made = await w.server.request('POST', '/api/users/new', {
    body: { username: 'eve', password: 'eve-password', isAdmin: false },
  })
  expect(made.status).toBe(200)
  const res = await fetch(`${w.emulator.url}/api/user/login?persist=false`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'eve', password: 'eve-password' }),
  })
  return (await res.text()).trim()
}

const inWorld = (w: World, env: NodeJS.ProcessEnv, ...args: string[]) =>
  cli(['-C', w.root, ...args], { cwd: w.root, env: { ...w.env, ...env } })

describe.each(DIALECTS)('%s: doctor', (dialect) => {
  it('passes on a healthy workspace, runs the self-test, and never prints a token', async () => {
    world = await syncedWorld(dialect)
    const r = await world.cli('doctor', '--self-test')
    expect(r.stderr).toBe('')
    expect(r.exitCode).toBe(0)
    for (const name of [
      'server',
      'token',
      'target',
      'permissions',
      'sync settings',
      'clock',
      'state',
      'conflicts',
      'self-test',
    ])
      expect(r.stdout).toMatch(new RegExp(`✓ ${name}`))
    expect(r.stdout).toContain(`${dialect} dialect`)
    expect(r.stdout).toContain('all checks passed')
    expect(r.stdout).not.toContain(world.emulator.token())
  })

  it('fails with a hint on a bad token, and reports the parent of an inheriting project without its token', async () => {
    const family = await inheritingWorld(dialect)
    world = family.world
    const bad = await inWorld(world, { CMS_SYNC_TOKEN: 'f'.repeat(40) }, 'doctor', '--json')
    expect(bad.exitCode).toBe(1)
    const checks = (bad.json as { checks: Array<{ name: string; ok: boolean; hint?: string }> }).checks
    expect(checks.find((c) => c.name === 'token')).toMatchObject({
      ok: false,
      hint: expect.stringContaining('login'),
    })

    const good = await world.cli('doctor', '--json')
    const sync = good.json.checks.find((c: { name: string }) => c.name === 'sync settings')
    expect(sync).toMatchObject({ ok: true, detail: expect.stringContaining(family.parent.url) })
    expect(good.stdout).not.toContain(family.parent.token())
    expect(good.exitCode).toBe(0)

    await family.parent.close()
    const down = await world.cli('doctor')
    expect(down.exitCode).toBe(1)
    expect(down.stdout).toMatch(/✗ sync settings .*does not answer/)
  })

  it('fails when the workspace has pending conflicts', async () => {
    world = await syncedWorld(dialect)
    await world.editJson('content/home.json', { properties: { title: 'local' } })
    await world.setContent('home', { properties: { title: 'remote' } })
    expect((await world.cli('sync')).exitCode).toBe(3)
    const r = await world.cli('doctor')
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toMatch(/✗ conflicts\s+1 pending/)
  })
})

describe.each(DIALECTS)('%s: init checks the target', (dialect) => {
  it('lists the projects, or the environments, that exist when one is wrong', async () => {
    world = await startWorld(dialect)
    const cwd = await mkdtemp(path.join(tmpdir(), 'cms-sync-init-'))
    const env = { CMS_SYNC_TOKEN: world.emulator.token() }
    const base = ['init', '--server', world.emulator.url, '--dialect', dialect]
    const project = await cli([...base, '--project', 'nope', '--environment', 'live'], { cwd, env })
    expect(project.exitCode).toBe(2)
    expect(project.stderr).toContain('no project "nope"')
    expect(project.stderr).toContain('--project one of: demo')
    const environment = await cli([...base, '--project', 'demo', '--environment', 'staging'], { cwd, env })
    expect(environment.exitCode).toBe(2)
    expect(environment.stderr).toContain('--environment one of: live')
    const ok = await cli([...base, '--project', 'demo', '--environment', 'live'], { cwd, env })
    expect(ok.exitCode).toBe(0)
  })
})

describe.each(DIALECTS)('%s: server-config', (dialect) => {
  it('get and set with an admin; a clear refusal for a non-admin; bad files named with their line', async () => {
    world = await startWorld(dialect)
    const file = path.join(world.root, 'mail.yaml')
    await writeFile(file, 'host: smtp.example.com\nport: 587\n')
    const set = await world.cli('server-config', 'set', 'mail', file)
    if (dialect === 'upstream') {
      expect(set.exitCode).toBe(1)
      expect(set.stderr).toContain('does not support config sections')
      return
    }
    expect(set.stderr).toBe('')
    expect(set.exitCode).toBe(0)
    const got = await world.cli('server-config', 'get', 'mail', '--format', 'json')
    expect(got.json).toEqual({ host: 'smtp.example.com', port: 587 })
    const yaml = await world.cli('server-config', 'get', 'mail')
    expect(yaml.stdout).toBe('host: smtp.example.com\nport: 587\n')

    const eve = await nonAdminToken(world)
    const refused = await inWorld(world, { CMS_SYNC_TOKEN: eve }, 'server-config', 'get', 'mail')
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toContain('needs an admin token')

    const broken = path.join(world.root, 'broken.json')
    await writeFile(broken, '{\n  "host": "x",\n  "port": [\n}\n')
    const bad = await world.cli('server-config', 'set', 'mail', broken)
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toMatch(/broken\.json: .*line \d+/)
    expect((await world.cli('server-config', 'get', 'mail', '--format', 'json')).json).toEqual({
      host: 'smtp.example.com',
      port: 587,
    })
  })
})

describe.each(DIALECTS)('%s: status shows upcoming scheduled changes', (dialect) => {
  it('lists future publish/unpublish dates, soonest first, asking only about scheduled items', async () => {
    world = await startWorld(dialect, { content: ['home', 'news', 'shop'] })
    const soon = new Date(Date.now() + 86_400_000).toISOString()
    const later = new Date(Date.now() + 7 * 86_400_000).toISOString()
    await world.setContent('news', { unpublishOn: later })
    await world.setContent('shop', { publishOn: soon })
    expect((await world.cli('sync')).exitCode).toBe(0)
    const before = world.proxy.seen.length
    const r = await world.cli('status', '--json')
    expect(r.exitCode).toBe(0)
    expect(r.json.scheduled).toEqual([
      { kind: 'content', id: 'shop', path: 'content/shop.json', type: 'publish', date: soon },
      { kind: 'content', id: 'news', path: 'content/news.json', type: 'unpublish', date: later },
    ])
    // One request per scheduled item at most: never one for home.
    const calls = world.proxy.seen.slice(before)
    expect(calls.some((c) => c.includes('/home'))).toBe(false)
    expect(calls.filter((c) => /schedule|content\/(news|shop)$/.test(c))).toHaveLength(2)
    const text = await world.cli('status')
    expect(text.stdout).toMatch(
      /scheduled:\n {2}\S+ {2}publish {3}content\/shop\.json\n {2}\S+ {2}unpublish content\/news\.json/,
    )
  })
})
