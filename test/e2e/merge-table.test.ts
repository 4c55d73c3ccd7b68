// One scenario per row of the merge table (test/engine/merge.test.ts, README "How edits on both
// sides merge"), against the real emulator in both dialects: Given a synced workspace, When the
// file and the server each change the same item, Then status names the merge (or the
// conflicting leaves), and sync lands both edits on both sides (or keeps the conflict: the file
// keeps its value, the server copy is kept in .cms-sync/conflicts/).

import { execFileSync } from 'node:child_process'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { afterEach, describe, expect, test } from 'vitest'
import { canonicalJson } from '../../src/workspace/canonical-json.js'
import { gitConnection } from '../helpers/fixtures.js'
import { startWorld, type World } from '../helpers/sync-world.js'
import { setWatchConfig, watchInProcess } from '../helpers/watch.js'

// biome-ignore lint/suspicious/noExplicitAny: the rows edit documents of any shape
type Doc = Record<string, any>
type Kind = 'content' | 'schema' | 'form'
type Step = (w: World) => Promise<void>

const FORM = { id: 'contact', title: 'Contact', inputs: { name: { type: 'text', required: true } } }

const fileOf: Record<string, string> = {
  content: 'content/news.json',
  schema: 'schemas/section.json',
  form: 'forms/contact.json',
}
const idOf: Record<string, string> = { content: 'news', schema: 'section', form: 'contact' }

const onFile =
  (kind: Kind, edit: (doc: Doc) => void): Step =>
  async (w) => {
    const doc = await w.readJson(fileOf[kind]!)
    edit(doc)
    await w.writeJson(fileOf[kind]!, doc)
  }
const onServer =
  (kind: Kind, edit: (doc: Doc) => void): Step =>
  async (w) => {
    const doc = (await w.server.get(kind, idOf[kind]!)) as Doc
    edit(doc)
    await w.server.put(kind, idOf[kind]!, doc)
  }

interface Row {
  name: string
  kind: Kind
  /** The server's item before the first sync (the base). */
  given?: (doc: Doc) => void
  local: (doc: Doc) => void
  remote: (doc: Doc) => void
  /** Merged: what both sides hold afterwards. Conflict: the leaves status names. */
  merged?: (doc: Doc) => void
  conflict?: string[]
  /** What status shows when not a merge: the merge is one side's copy (a pull or a push). */
  status?: { local: string; action: string }
}

const ml = (en: string, de: string) => ({ _multilingual: true, en, de })
/** Whether files keep the server's key order (design.md); with sorted keys a reorder is no edit. */
const keepsOrder = canonicalJson({ b: 1, a: 2 }).indexOf('"b"') < canonicalJson({ b: 1, a: 2 }).indexOf('"a"')

const ROWS: Row[] = [
  {
    name: 'disjoint leaves',
    kind: 'content',
    local: (d) => {
      d.properties.title = 'local title'
    },
    remote: (d) => {
      d.sort = 7
    },
    merged: (d) => expect(d).toMatchObject({ sort: 7, properties: { title: 'local title' } }),
  },
  {
    name: 'same leaf, same value',
    kind: 'content',
    local: (d) => {
      d.properties.title = 'same'
    },
    remote: (d) => {
      d.properties.title = 'same'
      d.sort = 7
    },
    merged: (d) => expect(d).toMatchObject({ sort: 7, properties: { title: 'same' } }),
    // The server holds every edit the file made: the merge is the server copy.
    status: { local: 'modified', action: 'pull' },
  },
  {
    name: 'same leaf, different values',
    kind: 'content',
    local: (d) => {
      d.properties.title = 'local'
    },
    remote: (d) => {
      d.properties.title = 'remote'
    },
    conflict: ['/properties/title'],
  },
  {
    name: 'one language each',
    kind: 'content',
    given: (d) => {
      d.properties.title = ml('News', 'Neuigkeiten')
    },
    local: (d) => {
      d.properties.title.de = 'Nachrichten'
    },
    remote: (d) => {
      d.properties.title.en = 'Latest news'
    },
    merged: (d) => expect(d.properties.title).toEqual(ml('Latest news', 'Nachrichten')),
  },
  {
    name: 'add vs add of different keys',
    kind: 'content',
    local: (d) => {
      d.properties.intro = 'local intro'
    },
    remote: (d) => {
      d.properties.tags = 'remote,tags'
    },
    merged: (d) => expect(d.properties).toMatchObject({ intro: 'local intro', tags: 'remote,tags' }),
  },
  {
    name: 'key delete vs edit',
    kind: 'content',
    given: (d) => {
      d.properties.intro = 'intro'
    },
    local: (d) => {
      delete d.properties.intro
    },
    remote: (d) => {
      d.properties.intro = 'new intro'
    },
    conflict: ['/properties/intro'],
  },
  {
    name: 'reorder vs edit',
    kind: 'content',
    given: (d) => {
      d.properties = { a: 'A', b: 'B', title: 'news' }
    },
    local: (d) => {
      d.properties = { title: d.properties.title, b: d.properties.b, a: d.properties.a }
    },
    remote: (d) => {
      d.properties.b = 'B2'
    },
    merged: (d) => {
      expect(d.properties).toEqual({ title: 'news', b: 'B2', a: 'A' })
      if (keepsOrder) expect(Object.keys(d.properties)).toEqual(['title', 'b', 'a'])
    },
    // While files sort their keys, a reorder is no edit at all.
    ...(keepsOrder ? {} : { status: { local: 'unchanged', action: 'pull' } }),
  },
  {
    name: 'nested objects',
    kind: 'content',
    local: (d) => {
      d.settings.publishing.connectionId = 'web'
    },
    remote: (d) => {
      d.settings.menu = { show: false }
    },
    merged: (d) => expect(d.settings).toEqual({ publishing: { connectionId: 'web' }, menu: { show: false } }),
  },
  {
    name: 'array without ids: one value',
    kind: 'content',
    given: (d) => {
      d.properties.list = ['a', 'b']
    },
    local: (d) => {
      d.properties.list.push('c')
    },
    remote: (d) => {
      d.properties.list.unshift('x')
    },
    conflict: ['/properties/list'],
  },
  {
    name: 'array with ids: items merge by id',
    kind: 'content',
    given: (d) => {
      d.properties.blocks = [
        { id: 'a', text: 'A' },
        { id: 'b', text: 'B' },
      ]
    },
    local: (d) => {
      d.properties.blocks[0].text = 'A local'
    },
    remote: (d) => {
      d.properties.blocks[1].text = 'B remote'
      d.properties.blocks.push({ id: 'c', text: 'C remote' })
    },
    merged: (d) =>
      expect(d.properties.blocks).toEqual([
        { id: 'a', text: 'A local' },
        { id: 'b', text: 'B remote' },
        { id: 'c', text: 'C remote' },
      ]),
  },
  {
    name: 'schema field added on each side',
    kind: 'schema',
    local: (d) => {
      d.fields.properties.intro = { label: 'Intro', schemaId: 'string', tabId: 'content' }
    },
    remote: (d) => {
      d.fields.properties.image = { label: 'Image', schemaId: 'mediaReference', tabId: 'content' }
    },
    merged: (d) => expect(Object.keys(d.fields.properties).sort()).toEqual(['image', 'intro', 'title']),
  },
  {
    name: 'a form input on each side',
    kind: 'form',
    local: (d) => {
      d.inputs.email = { type: 'text', required: true }
    },
    remote: (d) => {
      d.inputs.phone = { type: 'text' }
    },
    merged: (d) => expect(Object.keys(d.inputs).sort()).toEqual(['email', 'name', 'phone']),
  },
]

describe.each(['spec', 'upstream'] as const)('how edits on both sides merge (%s dialect)', (dialect) => {
  let world: World
  afterEach(async () => world?.close())

  test.each(ROWS)('$name', async (row) => {
    // Given a workspace synced with the server
    world = await startWorld(dialect, { resources: ['schemas', 'content', 'forms'] })
    await world.server.put('form', 'contact', FORM)
    if (row.given) await onServer(row.kind, row.given)(world)
    expect((await world.cli('sync')).exitCode).toBe(0)
    // When the file and the server each change the item
    await onFile(row.kind, row.local)(world)
    await onServer(row.kind, row.remote)(world)
    const path = fileOf[row.kind]!
    // Then status names the merge, or the conflicting leaves
    const status = await world.cli('--json', 'status')
    const change = {
      kind: row.kind,
      path,
      local: 'modified',
      remote: 'modified',
      action: 'merge',
      ...row.status,
    }
    if (row.merged) {
      expect(status.json.changes).toEqual([expect.objectContaining(change)])
    } else {
      expect(status.json.changes).toEqual([expect.objectContaining({ ...change, action: 'conflict' })])
      expect(status.json.changes[0].leaves.map((l: { path: string }) => l.path)).toEqual(row.conflict)
      const diff = await world.cli('--json', 'diff')
      expect(diff.json.diffs[0].leaves.map((l: { path: string }) => l.path)).toEqual(row.conflict)
    }
    const localBefore = await world.readJson(path)
    const sync = await world.cli('--json', 'sync')
    expect(sync.stderr).toBe('')
    if (row.merged) {
      // Both edits land on both sides, and nothing is left to do.
      expect(sync.exitCode).toBe(0)
      row.merged(await world.readJson(path))
      row.merged((await world.server.get(row.kind, idOf[row.kind]!)) as Doc)
      expect((await world.cli('--json', 'status')).json.clean).toBe(true)
    } else {
      // The file keeps its value; the server's copy is kept beside it; the server keeps its own.
      expect(sync.exitCode).toBe(3)
      expect(sync.json.conflicts[0].leaves.map((l: { path: string }) => l.path)).toEqual(row.conflict)
      expect(await world.readJson(path)).toEqual(localBefore)
      const kept = JSON.parse(await readFile(world.file(`.cms-sync/conflicts/${path}.remote`), 'utf8'))
      const server = (await world.server.get(row.kind, idOf[row.kind]!)) as Doc
      expect(kept.properties).toEqual(server.properties)
    }
  })

  test('deleting an item on one side and editing it on the other stays a conflict', async () => {
    world = await startWorld(dialect)
    expect((await world.cli('sync')).exitCode).toBe(0)
    await world.remove('content/news.json')
    await onServer('content', (d) => {
      d.sort = 9
    })(world)
    const status = await world.cli('--json', 'status')
    expect(status.json.changes).toEqual([
      expect.objectContaining({
        path: 'content/news.json',
        local: 'deleted',
        remote: 'modified',
        action: 'conflict',
      }),
    ])
    expect((await world.cli('sync')).exitCode).toBe(3)
    expect(await world.exists('content/news.json')).toBe(false)
    expect((await world.server.get('content', 'news'))?.sort).toBe(9)
  })

  test('resolve settles single leaves: the chosen one takes a side, the others stay in conflict', async () => {
    world = await startWorld(dialect)
    expect((await world.cli('sync')).exitCode).toBe(0)
    await onFile('content', (d) => {
      d.properties.title = 'local title'
      d.properties.intro = 'local intro'
      d.sort = 3
    })(world)
    await onServer('content', (d) => {
      d.properties.title = 'remote title'
      d.properties.intro = 'remote intro'
      // A disjoint top-level edit (not isPublished: a published item's write publishes it).
      d.settings = { publishing: { connectionId: 'site' } }
    })(world)
    const first = await world.cli(
      '--json',
      'resolve',
      'content/news.json#/properties/title',
      '--keep',
      'remote',
    )
    expect(first.exitCode).toBe(3)
    expect(first.json.conflicts).toMatchObject([
      { path: 'content/news.json', leaves: [{ path: '/properties/intro' }] },
    ])
    // The settled leaf and the disjoint edits agree on both sides; the open leaf keeps each side's value.
    expect(await world.readJson('content/news.json')).toMatchObject({
      sort: 3,
      settings: { publishing: { connectionId: 'site' } },
      properties: { title: 'remote title', intro: 'local intro' },
    })
    expect(await world.server.get('content', 'news')).toMatchObject({
      sort: 3,
      settings: { publishing: { connectionId: 'site' } },
      properties: { title: 'remote title', intro: 'remote intro' },
    })
    const status = await world.cli('--json', 'status')
    expect(status.json.changes[0].leaves.map((l: { path: string }) => l.path)).toEqual(['/properties/intro'])
    // A leaf that is not in conflict is refused by name.
    const wrong = await world.cli('resolve', 'content/news.json#/sort', '--keep', 'local')
    expect(wrong.exitCode).toBe(2)
    expect(wrong.stderr).toContain('/properties/intro')
    const second = await world.cli(
      '--json',
      'resolve',
      'content/news.json#/properties/intro',
      '--keep',
      'local',
    )
    expect(second.exitCode).toBe(0)
    expect(await world.server.get('content', 'news')).toMatchObject({ properties: { intro: 'local intro' } })
    expect((await world.cli('--json', 'status')).json.clean).toBe(true)
  })

  test('without .cms-sync/bases/ (a fresh clone), the base is the committed version in git', async () => {
    world = await startWorld(dialect)
    expect((await world.cli('sync')).exitCode).toBe(0)
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
        cwd: world.root,
        stdio: 'pipe',
      })
    // As `cms-sync init` leaves it: .cms-sync/ is never committed (a committed one is refused).
    await writeFile(world.file('.gitignore'), '.cms-sync/\n')
    git('init', '-q')
    git('add', '-A')
    git('commit', '-qm', 'synced')
    await rm(world.file('.cms-sync/bases'), { recursive: true })
    await onFile('content', (d) => {
      d.properties.title = 'local title'
    })(world)
    await onServer('content', (d) => {
      d.sort = 8
    })(world)
    const status = await world.cli('--json', 'status')
    expect(status.json.changes).toEqual([
      expect.objectContaining({ path: 'content/news.json', action: 'merge' }),
    ])
    expect((await world.cli('sync')).exitCode).toBe(0)
    expect(await world.readJson('content/news.json')).toMatchObject({
      sort: 8,
      properties: { title: 'local title' },
    })
    expect(await world.server.get('content', 'news')).toMatchObject({
      sort: 8,
      properties: { title: 'local title' },
    })
  })

  test('watch merges as it goes: a file saved while the server changed another leaf', async () => {
    world = await startWorld(dialect)
    expect((await world.cli('sync')).exitCode).toBe(0)
    // No poll meanwhile: the save's own run finds the server's edit.
    await setWatchConfig(world.root, { debounceMs: 50, pollSeconds: 600 })
    const watching = watchInProcess(world.root, world.env)
    try {
      await watching.waitForEvent({ event: 'reconciled' })
      await onServer('content', (d) => {
        d.sort = 4
      })(world)
      await onFile('content', (d) => {
        d.properties.title = 'saved while watching'
      })(world)
      await watching.waitForEvent({ event: 'merged', path: 'content/news.json' })
      const both = { sort: 4, properties: { title: 'saved while watching' } }
      expect(await world.readJson('content/news.json')).toMatchObject(both)
      expect(await world.server.get('content', 'news')).toMatchObject(both)
    } finally {
      await watching.stop()
    }
  })

  test('a connection merges on its file form: secrets stay references, never in a file or a base', async () => {
    world = await startWorld(dialect, { resources: ['schemas', 'content', 'connections'] })
    world.extraEnv.CMS_SYNC_SECRET_SITE_DEPLOYER_PASSWORD = 's3cret-pw'
    const connection = gitConnection('s3cret-pw')
    await world.server.put('connection', 'site', connection)
    expect((await world.cli('sync')).exitCode).toBe(0)
    const rel = 'connections/site.json'
    await world.editJson(rel, { title: 'Site (renamed)' })
    await world.server.put('connection', 'site', { ...connection, url: 'https://new.example.test' })
    const sync = await world.cli('--json', 'sync')
    expect(sync.json.applied).toMatchObject([{ path: rel, action: 'merge' }])
    expect(await world.server.get('connection', 'site')).toMatchObject({
      title: 'Site (renamed)',
      url: 'https://new.example.test',
      deployer: { password: 's3cret-pw' },
    })
    const file = await readFile(world.file(rel), 'utf8')
    expect(JSON.parse(file)).toMatchObject({ title: 'Site (renamed)', url: 'https://new.example.test' })
    expect(file).not.toContain('s3cret-pw')
    for (const name of await readdir(world.file('.cms-sync/bases')))
      expect(await readFile(world.file(`.cms-sync/bases/${name}`), 'utf8')).not.toContain('s3cret-pw')
    expect((await world.cli('--json', 'status')).json.clean).toBe(true)
  })
})
