// Hand-edited JSON files as editors leave them: a syntax error is named as file:line:column
// (what editors and terminals jump to), and a UTF-8 byte-order mark (Windows editors write one)
// is accepted as the file's content.

import { writeFile } from 'node:fs/promises'
import { afterEach, expect, test } from 'vitest'
import { contentFile } from '../helpers/fixtures.js'
import { syncedWorld, type World } from '../helpers/sync-world.js'

let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

test('a syntax error is reported as path:line:column', async () => {
  world = await syncedWorld('spec')
  const good = JSON.stringify(contentFile('broken'), null, 2).split('\n')
  // Line 3 loses its trailing comma: the error is at the start of line 4's key.
  good[2] = good[2]!.replace(/,$/, '')
  await writeFile(world.file('content/broken.json'), `${good.join('\n')}\n`)
  const push = await world.cli('--json', 'push')
  expect(push.exitCode).toBe(1)
  expect(push.json.failed).toEqual([
    expect.objectContaining({
      path: 'content/broken.json',
      error: expect.stringMatching(/^content\/broken\.json:4:3: invalid JSON: /),
    }),
  ])
  const text = await world.cli('push')
  expect(text.stdout).toContain('content/broken.json:4:3: invalid JSON')
  expect(text.stdout).not.toMatch(/at position \d+/)

  await writeFile(world.file('content/broken.json'), '{ "id": "broken", ')
  const cut = await world.cli('--json', 'push')
  expect(cut.json.failed[0].error).toMatch(/^content\/broken\.json:1:19: invalid JSON: /)
})

test('a file with a UTF-8 byte-order mark is read as its JSON', async () => {
  world = await syncedWorld('spec')
  const file = contentFile('bom', { properties: { title: 'Saved by Notepad' } })
  await writeFile(world.file('content/bom.json'), `\uFEFF${JSON.stringify(file, null, 2)}\n`)
  const push = await world.cli('--json', 'push')
  expect(push.json.failed).toEqual([])
  expect(push.exitCode).toBe(0)
  expect(await world.server.get('content', 'bom')).toMatchObject({
    properties: { title: 'Saved by Notepad' },
  })
  // Read back as the same item: nothing left to sync.
  expect((await world.cli('--json', 'status')).json.clean).toBe(true)
})
