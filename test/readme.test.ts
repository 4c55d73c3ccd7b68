// The README is what a new user reads first: it must say how to get `cms-sync` on PATH, and its
// tables must render as tables (a blank line inside one splits it, and the rows after it show
// as a paragraph of pipes).

import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, test } from 'vitest'

const README = path.join(import.meta.dirname, '..', 'README.md')

test('the README says how to get cms-sync on PATH', async () => {
  const text = await readFile(README, 'utf8')
  expect(text).toMatch(/npm link/)
  expect(text).toMatch(/npx cms-sync/)
  expect(text).toMatch(/npm install (-g|--global)/)
})

test('"How sync decides" is one table with every row', async () => {
  const text = await readFile(README, 'utf8')
  const section = text.split(/^## How sync decides$/m)[1]!.split(/^## /m)[0]!
  const lines = section.split('\n')
  const start = lines.findIndex((l) => l.startsWith('| # |'))
  const table: string[] = []
  for (const line of lines.slice(start)) {
    if (!line.startsWith('|')) break
    table.push(line)
  }
  const numbers = table
    .map((l) => /^\| (\d+) \|/.exec(l)?.[1])
    .filter(Boolean)
    .map(Number)
  const everyRow = section.match(/^\| (\d+) \|/gm)?.length ?? 0
  expect(numbers.length).toBe(everyRow)
  expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1))
})

test('every command of the program is in the README command table', async () => {
  const text = await readFile(README, 'utf8')
  const table = text.split(/^## Commands$/m)[1]!.split(/^## /m)[0]!
  const { buildProgram } = await import('../src/cli/program.js')
  const { PassThrough } = await import('node:stream')
  const sink = new PassThrough()
  const program = await buildProgram(
    { stdout: sink, stderr: sink, env: {}, cwd: process.cwd(), stopSignal: new Promise(() => {}) },
    () => {},
  )
  const missing = program.commands.map((c) => c.name()).filter((name) => !table.includes(`\`${name}`))
  expect(missing).toEqual([])
})
