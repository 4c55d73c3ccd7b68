import { describe, expect, test } from 'vitest'
import { fileBytes } from '../../src/workspace/codec.js'
import { contentCodec } from '../../src/workspace/content-codec.js'
import { parseFileText } from '../../src/workspace/local-file.js'
import { schemaCodec } from '../../src/workspace/schema-codec.js'
import { SECTION_SCHEMA } from '../helpers/fixtures.js'

const remoteContent = {
  id: 'home',
  parentId: '',
  schemaId: 'page',
  sort: 1,
  isPublished: true,
  publishOn: null,
  unpublishOn: null,
  properties: { title: { _multilingual: true, en: 'Home', de: 'Start' } },
  settings: { publishing: { connectionId: '' } },
  createDate: '2024-01-01T00:00:00.000Z',
  updateDate: '2024-02-01T00:00:00.000Z',
  createdBy: 'u1',
  updatedBy: 'u2',
  viewedBy: 'u3',
  viewedOn: '2024-03-01T00:00:00.000Z',
  isLocked: false,
  sync: { isRemote: false, hasRemote: false },
}

describe('content codec', () => {
  test('volatile fields stay out of the file, and the same object always gives the same bytes', () => {
    const file = contentCodec.toFile(remoteContent)
    expect(Object.keys(file).sort()).toEqual([
      'id',
      'isPublished',
      'parentId',
      'properties',
      'publishOn',
      'schemaId',
      'settings',
      'sort',
      'unpublishOn',
    ])
    const shuffled = Object.fromEntries(Object.entries(remoteContent).reverse())
    expect(fileBytes(contentCodec.toFile(shuffled)).text).toBe(fileBytes(file).text)
  })

  test('the body adds back the stored createDate so the server does not reset it', () => {
    const body = contentCodec.toBody(contentCodec.toFile(remoteContent), {
      current: remoteContent,
      now: '2030-01-01T00:00:00.000Z',
    })
    expect(body.createDate).toBe('2024-01-01T00:00:00.000Z')
    expect(body).not.toHaveProperty('updateDate')
  })

  test('an item the server lost gets back the createDate of the last sync', () => {
    const body = contentCodec.toBody(
      { id: 'x', schemaId: 'page' },
      { current: undefined, baseCreateDate: '2021-01-01T00:00:00.000Z', now: '2030-01-01T00:00:00.000Z' },
    )
    expect(body.createDate).toBe('2021-01-01T00:00:00.000Z')
  })

  test('a new item gets now as its createDate', () => {
    const body = contentCodec.toBody(
      { id: 'x', schemaId: 'page' },
      { current: undefined, now: '2030-01-01T00:00:00.000Z' },
    )
    expect(body.createDate).toBe('2030-01-01T00:00:00.000Z')
  })

  test.each([
    ['{ "id": "home", ', /invalid JSON/],
    ['{"id":"home","schemaId":"page","sort":"first"}', /sort: expected a number, got "first" \(string\)/],
    ['{"id":"other","schemaId":"page"}', /id: "other" does not match the file name, which stands for "home"/],
    ['{"id":"home"}', /schemaId: required/],
    ['{"id":"home","schemaId":"page","publishOn":"soon"}', /publishOn: expected an ISO date string or null/],
    ['{"id":"home","schemaId":"page","updateDate":"2024"}', /updateDate: not a field/],
    ['[1]', /expected a JSON object, got an array/],
  ])('bad file %s is refused with a clear problem', (text, problem) => {
    const parsed = parseFileText(contentCodec, text, 'home')
    expect(parsed.ok).toBe(false)
    if (!parsed.ok) expect(parsed.problems.join('\n')).toMatch(problem)
  })

  test('a file without id takes the file stem; route words are refused', () => {
    const parsed = parseFileText(contentCodec, '{"schemaId":"page"}', 'about')
    expect(parsed).toMatchObject({ ok: true, file: { id: 'about' } })
    expect(parseFileText(contentCodec, '{"schemaId":"page"}', 'new')).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/reserves/)],
    })
  })

  test('formatting is not an edit: the hash is of the canonical form', () => {
    const a = parseFileText(contentCodec, '{"id":"a","schemaId":"page","sort":1}', 'a')
    const b = parseFileText(contentCodec, '{\n    "sort": 1,\n "schemaId": "page", "id": "a"}', 'a')
    expect(a.hash).toBe(b.hash)
  })

  test('an unknown schemaId is named', () => {
    expect(
      contentCodec.checkReferences({ id: 'a', schemaId: 'nope' }, { ids: { schema: new Set(['page']) } }),
    ).toEqual([expect.stringMatching(/unknown schema "nope"/)])
  })
})

describe('schema codec', () => {
  const schema = {
    ...SECTION_SCHEMA,
    isLocked: false,
    sync: { isRemote: false, hasRemote: false },
    viewedBy: '',
    viewedOn: null,
  }

  test('keeps the content-schema fields and drops the volatile ones', () => {
    const file = schemaCodec.toFile(schema)
    expect(file).not.toHaveProperty('isLocked')
    expect(file).not.toHaveProperty('viewedOn')
    expect(file).toHaveProperty('allowedChildSchemas')
  })

  test('a schema revision is the hash of its file form, blind to volatile fields', () => {
    expect(schemaCodec.revisionOf(schema)).toBe(schemaCodec.revisionOf({ ...schema, viewedOn: '2025-01-01' }))
  })

  test('type is required and must be content or field', () => {
    expect(parseFileText(schemaCodec, '{"id":"s","type":"page"}', 's')).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/type: expected one of content, field/)],
    })
  })

  test('a built-in schema id is refused: the server would keep a hidden shadow copy', () => {
    expect(parseFileText(schemaCodec, '{"type":"content"}', 'page')).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/built-in schema/)],
    })
  })
})
