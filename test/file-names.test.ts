import { describe, expect, test } from 'vitest'
import { canonicalJson, sortedJson } from '../src/workspace/canonical-json.js'
import {
  decodeId,
  decodeMediaName,
  encodeId,
  encodeMediaName,
  UnsafeIdError,
} from '../src/workspace/file-names.js'
import { orderLike } from '../src/workspace/key-order.js'

describe('file names for ids', () => {
  test.each([
    ['home', 'home'],
    ['9f86d081884c7d65', '9f86d081884c7d65'],
    ['a/b', 'a%2Fb'],
    ['..', '%2E%2E'],
    ['../etc/passwd', '%2E.%2Fetc%2Fpasswd'],
    ['50%', '50%25'],
    ['tab\there', 'tab%09here'],
    ['CON', '%43ON'],
    ['nul.txt', '%6Eul.txt'],
    ['ends.', 'ends%2E'],
    ['Über Café', 'Über Café'],
    ['C:\\x', 'C%3A%5Cx'],
  ])('%j is stored as %j and reads back', (id, stem) => {
    expect(encodeId(id)).toBe(stem)
    expect(decodeId(stem)).toBe(id)
  })

  test('only the canonical spelling decodes, so two files never claim one id', () => {
    expect(decodeId('a%2fb')).toBeUndefined()
    expect(decodeId('%68ome')).toBeUndefined()
    expect(decodeId('bad%zz')).toBeUndefined()
  })

  test('empty and very long ids are refused with a reason', () => {
    expect(() => encodeId('')).toThrow(UnsafeIdError)
    expect(() => encodeId('x'.repeat(300))).toThrow(/more than 200 bytes/)
  })
})

describe('file names for media names', () => {
  test.each([
    ['logo.png', 'logo.png'],
    ['.htaccess', '.htaccess'],
    ['a:b?c*.png', 'a%3Ab%3Fc%2A.png'],
    ['<>|"', '%3C%3E%7C%22'],
    ['dot.', 'dot%2E'],
    ['space ', 'space%20'],
    ['CON', '%43ON'],
    ['com1.png', '%63om1.png'],
    ['100%.png', '100%25.png'],
    ['caf\u00e9.png', 'caf\u00e9.png'],
    ['cafe\u0301.png', 'cafe%CC%81.png'],
    ['\u00dcber cafe\u0301', '%C3%9Cber%20cafe%CC%81'.replace('%20', ' ')],
  ])('%j is stored as %j and reads back exactly', (name, part) => {
    expect(encodeMediaName(name)).toBe(part)
    expect(decodeMediaName(part)).toBe(name)
  })

  test('a file name that is no canonical encoding stands for itself, so nothing is lost', () => {
    for (const part of ['100%.png', 'a%3ab', 'bad%zz', '%68ome', 'CON'])
      expect(decodeMediaName(part)).toBe(part)
  })
})

describe('canonical JSON', () => {
  test('keeps the key order at every depth and array order, 2-space indent, ends with a newline', () => {
    const text = canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })
    expect(text).toBe(
      '{\n  "b": 1,\n  "a": {\n    "d": [\n      3,\n      {\n        "z": 1,\n        "y": 2\n      }\n    ],\n    "c": null\n  }\n}\n',
    )
    expect(canonicalJson(JSON.parse(text))).toBe(text)
  })

  test('the sorted form of version-1 states sorts keys at every depth, as files were written then', () => {
    const text = sortedJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })
    expect(text).toBe(
      '{\n  "a": {\n    "c": null,\n    "d": [\n      3,\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "b": 1\n}\n',
    )
  })
})

describe('orderLike', () => {
  test("takes the model's order at every depth, keeps keys the model lacks after, changes no value", () => {
    const value = { a: 1, b: { x: 1, y: [{ p: 1, q: 2 }], z: 3 }, c: 'new' }
    const model = { b: { z: 0, y: [{ q: 0, p: 0 }], x: 0 }, a: 0 }
    const ordered = orderLike(value, model)
    expect(canonicalJson(ordered)).toBe(
      canonicalJson({ b: { z: 3, y: [{ q: 2, p: 1 }], x: 1 }, a: 1, c: 'new' }),
    )
    expect(ordered).toEqual(value)
  })
})
