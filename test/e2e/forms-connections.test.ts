// Forms and connections end to end, both dialects: files both ways, form entries never in the
// workspace and never lost, `cms-sync entries` export and clear, connection secrets as
// ${ENV_VAR} references that never reach a file, and deployer/processor types checked.

import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { gitConnection } from '../helpers/fixtures.js'
import { stateText } from '../helpers/state-files.js'
import { startWorld, type World } from '../helpers/sync-world.js'

/** A `${NAME}` reference as it appears in a file. */
const ref = (name: string) => `$\{${name}}`

const ALL = ['schemas', 'content', 'media', 'forms', 'connections']

const FORM = {
  id: 'contact',
  title: 'Contact',
  allowedOrigin: '',
  redirect: '',
  appendRedirect: false,
  inputs: { name: { type: 'text', required: true }, message: { type: 'text' } },
}

const GIT = gitConnection('s3cret-pw')

/** A public form submission; upstream turns away a second one from the same address within 1 s. */
async function submit(w: World, formId: string, values: Record<string, string>): Promise<void> {
  const before = (await w.server.formEntries(formId))?.length ?? 0
  for (let attempt = 0; attempt < 40; attempt++) {
    await fetch(`${w.emulator.url}/api/demo/live/forms/${formId}/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(values),
      redirect: 'manual',
    })
    if (((await w.server.formEntries(formId))?.length ?? 0) > before) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('the submission was never stored')
}

describe.each(['spec', 'upstream'] as const)('forms and connections (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  async function synced(env: Record<string, string> = {}): Promise<World> {
    world = await startWorld(dialect, { resources: ALL })
    await world.server.put('form', 'contact', FORM)
    await world.server.put('connection', 'site', GIT)
    Object.assign(world.extraEnv, env)
    const first = await world.cli('sync')
    expect(first.exitCode, first.stderr + first.stdout).toBe(0)
    return world
  }

  test('a form is pulled without its entries, edited locally and pushed, and the entries survive', async () => {
    const w = await synced()
    await submit(w, 'contact', { name: 'Ann', message: 'hello, "world"' })
    const file = await w.readJson('forms/contact.json')
    expect(file).toEqual(FORM)
    // When the title is edited locally and pushed
    await w.editJson('forms/contact.json', { title: 'Write to us' })
    const push = await w.cli('--json', 'push')
    expect(push.exitCode, push.stderr).toBe(0)
    expect(push.json.applied).toMatchObject([{ kind: 'form', id: 'contact', action: 'push' }])
    // Then the server has the new title and still every entry; the file never held one
    expect((await w.server.get('form', 'contact'))?.title).toBe('Write to us')
    expect(await w.server.formEntries('contact')).toMatchObject([{ name: 'Ann', message: 'hello, "world"' }])
    expect(await readFile(w.file('forms/contact.json'), 'utf8')).not.toContain('entries')
    expect((await w.cli('--json', 'status')).json.clean).toBe(true)
  })

  test('a form added on the server is pulled; one added locally is created; a local delete deletes it', async () => {
    const w = await synced()
    await w.server.put('form', 'news letter.é', { ...FORM, id: 'news letter.é', title: 'Newsletter' })
    await w.writeJson('forms/survey.json', { ...FORM, id: 'survey', title: 'Survey' })
    const run = await w.cli('--json', 'sync')
    expect(run.exitCode, run.stderr).toBe(0)
    expect(await w.server.get('form', 'survey')).toMatchObject({ title: 'Survey' })
    const pulled = run.json.applied.find((a: { action: string }) => a.action === 'pull')
    expect(pulled).toMatchObject({ kind: 'form', id: 'news letter.é' })
    expect((await w.readJson(pulled.path)).title).toBe('Newsletter')
    await w.remove('forms/survey.json')
    expect((await w.cli('sync', '--allow-deletes')).exitCode).toBe(0)
    expect(await w.server.get('form', 'survey')).toBeUndefined()
  })

  test('entries export as JSON and RFC 4180 CSV, to stdout or a file; --clear needs --yes', async () => {
    const w = await synced()
    await submit(w, 'contact', { name: 'Ann', message: 'say "hi", then\nbye' })
    await submit(w, 'contact', { name: 'Bo', message: 'plain' })
    const json = await w.cli('entries', 'contact')
    expect(json.exitCode, json.stderr).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject([{ name: 'Ann' }, { name: 'Bo' }])
    const csv = await w.cli('entries', 'contact', '--format', 'csv', '--output', 'out.csv')
    expect(csv.exitCode, csv.stderr).toBe(0)
    const text = await readFile(path.join(w.root, 'out.csv'), 'utf8')
    const lines = text.split('\r\n')
    expect(lines[0]).toBe('name,message,time')
    expect(text).toContain('Ann,"say ""hi"", then\nbye",')
    expect(lines.filter((l) => l.startsWith('Bo,plain,'))).toHaveLength(1)
    // Refused without --yes: exit 2 and nothing cleared
    const refused = await w.cli('entries', 'contact', '--clear')
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toContain('--yes')
    expect(await w.server.formEntries('contact')).toHaveLength(2)
    const cleared = await w.cli('entries', 'contact', '--clear', '--yes', '-o', 'last.json')
    expect(cleared.exitCode, cleared.stderr).toBe(0)
    expect(JSON.parse(await readFile(path.join(w.root, 'last.json'), 'utf8'))).toHaveLength(2)
    expect(await w.server.formEntries('contact')).toEqual([])
    expect((await w.cli('entries', 'no-such-form')).exitCode).toBe(1)
    expect((await w.cli('entries', 'contact', '--format', 'xml')).exitCode).toBe(2)
  })

  test("CSV neutralises a stranger's spreadsheet formula by default; --raw-formulas keeps it as sent", async () => {
    const w = await synced()
    await submit(w, 'contact', { name: '=HYPERLINK("http://evil.example","click")', message: '+1 555' })
    await submit(w, 'contact', { name: '@SUM(A1)', message: '-2' })
    await submit(w, 'contact', { name: '\tTab', message: '\rcr' })
    const csv = await w.cli('entries', 'contact', '--format', 'csv')
    expect(csv.exitCode, csv.stderr).toBe(0)
    const lines = csv.stdout.split('\r\n')
    expect(lines[1]).toMatch(/^"'=HYPERLINK\(""http:\/\/evil.example"",""click""\)",'\+1 555,/)
    expect(lines[2]).toMatch(/^'@SUM\(A1\),'-2,/)
    expect(lines[3]).toMatch(/^'\tTab,"'\rcr",/)
    // The JSON export is the data as the server holds it; so is CSV on request.
    expect(JSON.parse((await w.cli('entries', 'contact')).stdout)[0].name).toBe(
      '=HYPERLINK("http://evil.example","click")',
    )
    const raw = await w.cli('entries', 'contact', '--format', 'csv', '--raw-formulas')
    expect(raw.exitCode, raw.stderr).toBe(0)
    expect(raw.stdout.split('\r\n')[1]).toMatch(
      /^"=HYPERLINK\(""http:\/\/evil.example"",""click""\)",\+1 555,/,
    )
  })

  test('a connection secret becomes an env variable reference: never in a file, resolved on push', async () => {
    const w = await synced()
    const rel = 'connections/site.json'
    const text = await readFile(w.file(rel), 'utf8')
    expect(text).not.toContain('s3cret-pw')
    expect((await w.readJson(rel)).deployer).toMatchObject({
      password: ref('CMS_SYNC_SECRET_SITE_DEPLOYER_PASSWORD'),
      username: 'deploy',
    })
    // Nothing secret in the state or the logs either
    const state = await stateText(w.root)
    expect(state).not.toContain('s3cret-pw')
    // An edit without the variable set fails clearly and sends nothing
    await w.editJson(rel, { title: 'Site (renamed)' })
    const unresolved = await w.cli('--json', 'push')
    expect(unresolved.exitCode).toBe(1)
    expect(unresolved.json.failed[0].error).toContain('CMS_SYNC_SECRET_SITE_DEPLOYER_PASSWORD')
    expect((await w.server.get('connection', 'site'))?.title).toBe('Site')
    // A variable holding another value than the server is a conflict of that leaf (no base of a
    // secret is kept, so a stale variable and a new one look alike); --prefer local sends it.
    w.extraEnv.CMS_SYNC_SECRET_SITE_DEPLOYER_PASSWORD = 'n3w-pw'
    const conflict = await w.cli('--json', 'push')
    expect(conflict.exitCode, JSON.stringify(conflict.json)).toBe(3)
    expect((await w.server.get('connection', 'site'))?.title).toBe('Site')
    const push = await w.cli('--json', 'push', '--prefer', 'local')
    expect(push.exitCode, JSON.stringify(push.json)).toBe(0)
    const stored = await w.server.get('connection', 'site')
    expect(stored).toMatchObject({ title: 'Site (renamed)', deployer: { password: 'n3w-pw' } })
    // No echo: the server secret equals the variable, the file keeps its reference
    const status = await w.cli('--json', 'status')
    expect(status.json.clean).toBe(true)
    expect(await readFile(w.file(rel), 'utf8')).not.toContain('n3w-pw')
    for (const log of [await readFile(w.file('.cms-sync/logs/cms-sync.log'), 'utf8').catch(() => '')])
      expect(log).not.toContain('n3w-pw')
  })

  test('a reference name chosen by hand is kept; a changed server secret is reported, never written', async () => {
    const w = await synced()
    const rel = 'connections/site.json'
    const file = await w.readJson(rel)
    await w.writeJson(rel, {
      ...file,
      title: 'Mine',
      deployer: { ...(file.deployer as object), password: ref('MY_GIT_PW') },
    })
    w.extraEnv.MY_GIT_PW = 's3cret-pw'
    // A name of one's own is read once the environment declares it (a committed file cannot).
    w.extraEnv.CMS_SYNC_SECRETS = 'MY_GIT_PW'
    expect((await w.cli('push')).exitCode).toBe(0)
    expect((await w.readJson(rel)).deployer).toMatchObject({ password: ref('MY_GIT_PW') })
    expect((await w.cli('--json', 'status')).json.clean).toBe(true)
    // Someone changes the password on the server
    const current = (await w.server.get('connection', 'site'))!
    await w.server.put('connection', 'site', {
      ...current,
      deployer: { ...(current.deployer as object), password: 'changed-on-server' },
    })
    const pull = await w.cli('--json', 'pull')
    expect(pull.exitCode).toBe(1)
    expect(JSON.stringify(pull.json.failed)).toContain('MY_GIT_PW')
    const after = await readFile(w.file(rel), 'utf8')
    expect(after).toContain(ref('MY_GIT_PW'))
    expect(after).not.toContain('changed-on-server')
    expect(await stateText(w.root)).not.toContain('changed-on-server')
  })

  test('a literal secret in a file is refused, and an unknown deployer type is refused before any write', async () => {
    const w = await synced({ CMS_SYNC_SECRET_SITE_DEPLOYER_PASSWORD: 's3cret-pw' })
    await w.writeJson('connections/leak.json', { ...GIT, id: 'leak' })
    await w.writeJson('connections/odd.json', {
      ...GIT,
      id: 'odd',
      deployer: { alias: 'ftp', password: ref('CMS_SYNC_SECRET_SITE_DEPLOYER_PASSWORD') },
    })
    const run = await w.cli('--json', 'push')
    expect(run.exitCode).toBe(1)
    const failed = Object.fromEntries(
      run.json.failed.map((f: { id: string; error: string }) => [f.id, f.error]),
    )
    expect(failed.leak).toContain('deployer.password: a secret must be a')
    expect(failed.odd).toContain('deployer.alias: expected one of the server')
    expect(failed.odd).toContain('"ftp"')
    expect(await w.server.get('connection', 'leak')).toBeUndefined()
    expect(await w.server.get('connection', 'odd')).toBeUndefined()
  })
})
